// Region and submission endings: success, failure (poison + quarantine, engine item
// 10), cancellation, and releasing later submissions that were ordered behind.
#include <string>
#include <utility>

#include "client/api/futex.h"
#include "daemon/engine/scheduler.h"

namespace accord::engine {

void Scheduler::end_region(RegionRun& run, Status status, bool launched) noexcept {
  const Clock::time_point end = Clock::now();
  Deferred deferred;
  {
    // The pending submission (or, once abandoned, the quarantine) keeps the graph and
    // with it the session alive up to here.
    Submission& s = *run.submission;
    PreparedGraph& graph = s.graph();
    Session& session = graph.session();
    SessionSchedule& q = session.schedule;
    std::unique_lock lock(q.mu);
    // The watchdog failed this region already and counted it out; the graph is
    // quarantined, so its slot was never reused and this late report can be dropped.
    if (run.abandoned) return;
    const PreparedRegion& region = graph.regions()[run.region];
    q.lane_busy[region.lane_slot] = 0;
    run.state = RegionState::Done;
    // A region failed before launch never reaches launch_returned().
    if (!launched && region.native_waits) --s.launching;
    --s.running;
    --s.remaining;
    const bool ok = status.ok();
    const bool cancelled = !ok && status.kind() == ErrorKind::Cancelled;
    if (ok) {
      session.counters().add_copy(region.lane, region.copy_bytes);
      engine_stats_.add_copy(region.lane, region.copy_bytes);
    } else if (cancelled) {
      s.cancel_requested = true;
    } else if (!launched) {
      // Nothing reached the device: fail the submission, poison nothing.
      if (!s.failed) {
        s.failed = true;
        s.outcome = std::move(status);
      }
    } else {
      fail_locked(s, run.region, std::move(status));
    }
    session.trace.record(run.started, end, devices_.at(region.device).info().id(), region.lane, ok ? region.copy_bytes : 0, !ok && !cancelled);
    if (s.launching == 0 && can_finish(s)) {
      settle(q, lock, deferred);  // may destroy s, graph and session: no access below
    } else {
      // The freed lane or a finished predecessor may let another region run.
      offer_locked(q);
    }
  }
  notify_progress();
  // Last: once the count reaches zero, shutdown may destroy the scheduler.
  const bool draining = draining_.load();
  if (inflight_.fetch_sub(1, std::memory_order_acq_rel) == 1 && draining) futex_wake_all(inflight_);
}

void Scheduler::fail_locked(Submission& s, std::uint32_t region, Status status) noexcept {
  PreparedGraph& graph = s.graph();
  const std::string source = status.to_string();
  if (!s.failed) {
    s.failed = true;
    const PreparedRegion& r = graph.regions()[region];
    std::string message = "executing graph region " + std::to_string(region) + " (" + std::string(to_string(r.lane)) +
                          " lane of " + devices_.at(r.device).info().id().to_string() + "): " + source;
    // A device that reports itself lost under the region is DeviceLost for the graph:
    // the graph did nothing wrong. Anything else is Execution.
    s.outcome = status.kind() == ErrorKind::DeviceLost ? device_lost_error(std::move(message))
                                                       : execution_error(std::move(message));
  }
  if (graph.quarantined()) return;
  // Completion is uncertain: every allocation the graph uses may have been half
  // written, so all of them are poisoned and kept, never freed under possible DMA.
  graph.quarantine();
  for (const AllocationUse& use : graph.uses())
    use.allocation->poison("a graph using this allocation failed: " + source);
  std::lock_guard lock(quarantine_mu_);
  quarantine_.push_back(Ref<PreparedGraph>::retain(&graph));
}

bool Scheduler::add_listener(Submission& s, TerminalListener& listener) noexcept {
  std::lock_guard lock(s.graph().session().schedule.mu);
  if (s.terminal()) return false;
  listener.next_listener = s.listeners;
  s.listeners = &listener;
  return true;
}

bool Scheduler::remove_listener(Submission& s, TerminalListener& listener) noexcept {
  {
    std::lock_guard lock(s.graph().session().schedule.mu);
    for (TerminalListener** link = &s.listeners; *link != nullptr; link = &(*link)->next_listener) {
      if (*link == &listener) {
        *link = listener.next_listener;
        listener.next_listener = nullptr;
        return true;
      }
    }
  }
  // Detached for telling: wait until the teller is done with every listener.
  s.wait_until_told();
  return false;
}

bool Scheduler::can_finish(const Submission& s) const noexcept {
  // A cancelled or failed submission ends once its running regions drained; its
  // unstarted regions are skipped, even those still waiting on producers.
  return s.occupied && s.running == 0 && (s.remaining == 0 || s.cancel_requested || s.failed);
}

bool Scheduler::sweep_locked(SessionSchedule& q, Deferred& deferred) noexcept {
  // Finishing one submission can fail its consumers (a failed producer) or let a
  // cancelled one end; repeat until nothing more can finish.
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (Submission* s = q.pending_head; s != nullptr; s = s->next) {
      if (s->launching == 0 && can_finish(*s)) {
        if (deferred.full()) return true;
        finish_locked(q, *s, deferred);
        progressed = true;
        break;
      }
    }
  }
  return false;
}

void Scheduler::settle(SessionSchedule& q, std::unique_lock<std::mutex>& lock, Deferred& deferred) noexcept {
  for (;;) {
    const bool more = sweep_locked(q, deferred);
    // Ended submissions may have unblocked later ones; offered before the flush, which
    // may release the session's last reference. With `more`, unfinished submissions
    // still retain it, so relocking is safe.
    offer_locked(q);
    lock.unlock();
    flush(deferred);
    if (!more) return;
    lock.lock();
  }
}

void Scheduler::flush(Deferred& deferred) noexcept {
  // Listeners first: each holds an observer, so its submission is still readable.
  for (std::size_t i = 0; i < deferred.count; ++i) {
    Submission& s = *deferred.ended[i];
    for (TerminalListener* l = std::exchange(deferred.listeners[i], nullptr); l != nullptr;) {
      TerminalListener* next = std::exchange(l->next_listener, nullptr);
      l->on_terminal(s);  // may destroy l (a listener deletes itself once told)
      l = next;
    }
    s.telling.store(0, std::memory_order_release);
  }
  // Then leases that waited for these submissions (their allocations are retained by
  // the waiters' owners, not by the graphs released below).
  tell_lease_waiters(std::exchange(deferred.leases, nullptr));
  // Then the pending job's graph reference: the last one runs the graph's destructor,
  // which frees native regions and perhaps memory, outside every engine lock.
  for (std::size_t i = 0; i < deferred.count; ++i)
    std::exchange(deferred.ended[i], nullptr)->graph().release();  // may destroy the submission
  deferred.count = 0;
}

void Scheduler::finish_locked(SessionSchedule& q, Submission& s, Deferred& deferred) noexcept {
  PreparedGraph& graph = s.graph();
  Session& session = graph.session();
  // Unlink; release later submissions that were ordered behind this one.
  if (s.prev) s.prev->next = s.next;
  else q.pending_head = s.next;
  if (s.next) s.next->prev = s.prev;
  else q.pending_tail = s.prev;
  for (Submission* t = s.next; t != nullptr; t = t->next)
    if (conflicts(graph, t->graph())) --t->blockers;
  s.prev = s.next = nullptr;
  for (const AllocationUse& use : graph.uses()) {
    Allocation::HostState& h = use.allocation->host_state();
    if (use.writes) --h.pending_writers;
    else --h.pending_readers;
  }
  --q.occupancy;
  count_pending(false);

  if (!s.failed && s.cancel_requested) s.outcome = cancelled_error();
  s.finished = Clock::now();
  s.occupied = false;
  // Consumers waiting on this producer (producers are of the same session).
  for (Submission* t = q.pending_head; t != nullptr; t = t->next) {
    for (std::uint32_t i = 0; i < t->producer_count; ++i) {
      if (t->producers[i] != &s) continue;
      --t->producers_pending;
      if (!s.outcome.ok() && !t->failed) {
        t->failed = true;
        t->outcome = execution_error("producer submission failed: " + s.outcome.to_string());
      }
    }
  }
  for (std::uint32_t i = 0; i < s.producer_count; ++i) s.producers[i]->release_observer();
  s.producer_count = 0;

  session.counters().add_completion();
  engine_stats_.add_completion();
  // Telling is marked before the submission turns terminal, so whoever sees it terminal
  // also sees that listeners are still being told (Submission::wait_until_told).
  if (s.listeners != nullptr) s.telling.store(1, std::memory_order_relaxed);
  s.signal.store(Submission::kTerminal);
  if (s.waiters.load() > 0) futex_wake_all(s.signal);
  deferred.ended[deferred.count] = &s;
  deferred.listeners[deferred.count] = std::exchange(s.listeners, nullptr);
  ++deferred.count;
  if (q.lease_sleepers > 0) q.host_cv.notify_all();
  if (q.lease_queue_head != nullptr) settle_lease_waiters_locked(q, deferred.leases);
}

}  // namespace accord::engine
