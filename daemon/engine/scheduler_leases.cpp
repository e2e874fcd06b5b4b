// Host leases against device work (engine item 8, seed 3.6): conflicting live leases
// are Busy at once; conflicting pending device work is waited for, or Busy for try_.
// A lease is registered under its allocation's session lock, the lock submits of that
// session take, so no submission can slip in (only that session's submissions can use
// the allocation). Two ways to wait, one rule (grant_lease_locked): a thread sleeps on
// the session's host_cv (the embedded runtime, gRPC's blocking pool), or a LeaseWaiter
// is queued on the session and told when a submission's end or a device loss settles
// it (accordd's ring, whose poller threads serve every session and must never sleep on
// one lease).
#include <string>
#include <thread>
#include <utility>

#include "daemon/engine/scheduler.h"

namespace accord::engine {
namespace {

Status not_host_mapped(const Allocation& allocation) {
  return unsupported_error("allocation " + std::to_string(allocation.id()) + " (" +
                           allocation.placement().to_string() +
                           ") is not host mapped; copy it to HostVisible storage in a graph");
}

}  // namespace

Status Scheduler::grant_lease_locked(Allocation& allocation, LeaseMode mode, bool& must_wait) {
  must_wait = false;
  const bool write = mode == LeaseMode::Write;
  if (Status s = devices_.check_generation(allocation.home(), allocation.home_generation()); !s.ok())
    return std::move(s).annotate("allocation " + std::to_string(allocation.id()));
  if (allocation.poisoned())
    return device_lost_error("allocation " + std::to_string(allocation.id()) +
                             " is poisoned: " + allocation.poison_message());
  Allocation::HostState& h = allocation.host_state();
  if (h.write_lease || (write && h.read_leases > 0))
    return busy_error("allocation " + std::to_string(allocation.id()) + " has a conflicting host mapping");
  const bool device_conflict = write ? (h.pending_readers + h.pending_writers) > 0 : h.pending_writers > 0;
  if (device_conflict) {
    must_wait = true;
    return Status();
  }
  if (write) h.write_lease = true;
  else ++h.read_leases;
  return Status();
}

Status Scheduler::acquire_lease(Allocation& allocation, LeaseMode mode, bool block) {
  if (!allocation.placement().host_mapped()) return not_host_mapped(allocation);
  SessionSchedule& q = allocation.session().schedule;
  std::unique_lock lock(q.mu);
  for (;;) {
    // Before the check (inline mode): device work that ends right after it moves progress_ on.
    const std::uint32_t seen = progress_.load();
    bool must_wait = false;
    ACCORD_RETURN_IF_ERROR(grant_lease_locked(allocation, mode, must_wait));
    if (!must_wait) return Status();
    if (!block)
      return busy_error("allocation " + std::to_string(allocation.id()) + " is in device use");
    if (inline_mode_) {
      lock.unlock();
      help_once(q, seen);
      lock.lock();
    } else {
      ++q.lease_sleepers;
      q.host_cv.wait(lock);
      --q.lease_sleepers;
    }
  }
}

Result<bool> Scheduler::acquire_lease_or_wait(Allocation& allocation, LeaseMode mode, LeaseWaiter& waiter) {
  if (!allocation.placement().host_mapped()) return not_host_mapped(allocation);
  SessionSchedule& q = allocation.session().schedule;
  const std::lock_guard lock(q.mu);
  bool must_wait = false;
  ACCORD_RETURN_IF_ERROR(grant_lease_locked(allocation, mode, must_wait));
  if (!must_wait) return true;
  waiter.waited_allocation = &allocation;
  waiter.waited_mode = mode;
  waiter.next_waiter = nullptr;
  if (q.lease_queue_tail != nullptr) q.lease_queue_tail->next_waiter = &waiter;
  else q.lease_queue_head = &waiter;
  q.lease_queue_tail = &waiter;
  return false;
}

bool Scheduler::cancel_lease_wait(LeaseWaiter& waiter) noexcept {
  // A waiter that was queued names its allocation, which its owner keeps alive until
  // told or cancelled; one never queued has nothing to take out.
  if (waiter.waited_allocation != nullptr) {
    SessionSchedule& q = waiter.waited_allocation->session().schedule;
    const std::lock_guard lock(q.mu);
    LeaseWaiter* previous = nullptr;
    for (LeaseWaiter* w = q.lease_queue_head; w != nullptr; previous = w, w = w->next_waiter) {
      if (w != &waiter) continue;
      if (previous != nullptr) previous->next_waiter = w->next_waiter;
      else q.lease_queue_head = w->next_waiter;
      if (q.lease_queue_tail == w) q.lease_queue_tail = previous;
      w->next_waiter = nullptr;
      return true;
    }
  }
  // Dequeued to be told: wait until every teller is done (telling never blocks, so this
  // is short), then the caller may reuse or destroy the waiter.
  while (leases_telling_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  return false;
}

void Scheduler::settle_lease_waiters_locked(SessionSchedule& q, LeaseWaiter*& told) noexcept {
  // Waiters are few (one per lease a client waits for), so a scan per submission end is
  // cheap; the queue keeps arrival order, so an earlier waiter is granted first, and
  // `told` keeps it too (appended at its end), so they hear in that order.
  LeaseWaiter** told_end = &told;
  while (*told_end != nullptr) told_end = &(*told_end)->next_waiter;
  LeaseWaiter* previous = nullptr;
  for (LeaseWaiter* w = q.lease_queue_head; w != nullptr;) {
    LeaseWaiter* next = w->next_waiter;
    bool must_wait = false;
    Status outcome = grant_lease_locked(*w->waited_allocation, w->waited_mode, must_wait);
    if (must_wait) {
      previous = w;
      w = next;
      continue;
    }
    if (previous != nullptr) previous->next_waiter = next;
    else q.lease_queue_head = next;
    if (q.lease_queue_tail == w) q.lease_queue_tail = previous;
    w->waited_outcome = std::move(outcome);
    w->next_waiter = nullptr;
    *told_end = w;
    told_end = &w->next_waiter;
    leases_telling_.fetch_add(1, std::memory_order_relaxed);
    w = next;
  }
}

void Scheduler::tell_lease_waiters(LeaseWaiter* told) noexcept {
  while (told != nullptr) {
    LeaseWaiter* w = std::exchange(told, told->next_waiter);
    w->next_waiter = nullptr;
    w->on_lease(std::move(w->waited_outcome));  // may reuse or destroy w: no access below
    leases_telling_.fetch_sub(1, std::memory_order_release);
  }
}

void Scheduler::release_lease(Allocation& allocation, LeaseMode mode) noexcept {
  std::lock_guard lock(allocation.session().schedule.mu);
  Allocation::HostState& h = allocation.host_state();
  // Host pages are coherent for the host device, so publishing a WriteGuard's bytes
  // needs no cache maintenance here; a device backend with its own caches hooks in here.
  if (mode == LeaseMode::Write) h.write_lease = false;
  else if (h.read_leases > 0) --h.read_leases;
}

}  // namespace accord::engine
