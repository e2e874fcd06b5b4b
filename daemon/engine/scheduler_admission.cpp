// Submit: the checks of seed 2.15 in their order, then reset of a free slot and
// whole-graph ordering against the session's earlier pending submissions, all under
// the session's own lock. No allocation, no inference: the summaries compared here
// were built at prepare.
#include <string>

#include "daemon/engine/scheduler.h"

namespace accord::engine {
namespace {

// "the buffer of graph node 3 binding 1 (allocation 17)": the node and binding are
// what the client recorded; the allocation id is only for logs.
std::string use_name(const AllocationUse& use) {
  return "the buffer of graph node " + std::to_string(use.first_node) + " binding " +
         std::to_string(use.first_binding) + " (allocation " + std::to_string(use.allocation->id()) + ")";
}

}  // namespace

// Both graphs belong to one session: sessions never share allocations, so a session's
// submissions are ordered only against its own.
bool Scheduler::conflicts(const PreparedGraph& a, const PreparedGraph& b) noexcept {
  if (&a == &b) return a.self_conflicting();
  return a.summary().conflicts(b.summary());
}

Result<Submission*> Scheduler::submit(PreparedGraph& graph, std::span<Submission* const> producers) {
  Submission* slot = nullptr;
  SessionSchedule& q = graph.session().schedule;
  std::unique_lock lock(q.mu);
  ACCORD_RETURN_IF_ERROR(admit_locked(q, graph, producers, slot));
  if (slot->failed) {
    // A producer had failed already: the submission ends at once. The caller's
    // observer keeps the slot readable.
    Deferred deferred;
    settle(q, lock, deferred);
    return slot;
  }
  const bool runnable = slot->blockers == 0 && slot->producers_pending == 0;
  // Ready regions on devices that launch asynchronously (a GPU) are launched here: a
  // launch takes microseconds and never waits for the device, and it spares the
  // wake-up of a worker (5-15 us of someone's CPU, and on a busy machine a preempted
  // thread) for work this thread can hand to the device at once. The caller's observer
  // keeps the slot alive across execute().
  bool host_ready = false;
  if (runnable && !inline_mode_) {
    while (RegionRun* run = pick_locked(q, slot, /*launch_only=*/true, &host_ready)) {
      lock.unlock();
      execute(*run);
      lock.lock();
    }
  }
  // A ready host region goes on the ready queue for a worker (the waiter, who looks at
  // its own submission first, may take it before). Inline mode has no queue: waiting
  // threads run their own session's regions.
  if (runnable && host_ready && !q.queued) enqueue_locked(q);
  return slot;
}

Status Scheduler::admit_locked(SessionSchedule& q, PreparedGraph& graph, std::span<Submission* const> producers,
                               Submission*& out_slot) {
  Session& session = graph.session();
  // Counted before shutdown_ is read (both sequentially consistent), so a worker that
  // leaves at shutdown either sees this submission pending or this sees shutdown_.
  count_pending(true);
  struct Uncount {
    Scheduler* scheduler;
    ~Uncount() {
      if (scheduler) scheduler->count_pending(false);
    }
  } uncount{this};
  if (shutdown_.load()) return busy_error("the engine is shutting down");
  // 1. Lost devices, poison and quarantine.
  ACCORD_RETURN_IF_ERROR(graph.check_devices(devices_));
  if (graph.quarantined()) return device_lost_error("graph quarantined after native failure");
  for (const AllocationUse& use : graph.uses())
    if (use.allocation->poisoned())
      return device_lost_error(use_name(use) + " is poisoned: " + use.allocation->poison_message());
  // 2. Producers.
  if (producers.size() > kMaxProducers)
    return invalid_error("submit_after accepts at most " + std::to_string(kMaxProducers) +
                         " producers, got " + std::to_string(producers.size()));
  for (std::size_t i = 0; i < producers.size(); ++i) {
    if (producers[i] == nullptr) return invalid_error("producer " + std::to_string(i) + " is empty");
    if (&producers[i]->graph().session() != &session)
      return invalid_error("producer " + std::to_string(i) + " belongs to another runtime");
    if (!producers[i]->occupied && !producers[i]->terminal())
      return invalid_error("producer " + std::to_string(i) + " was never submitted");
  }
  // 3. Capacity.
  if (q.occupancy >= session.limits().max_submissions)
    return busy_error("runtime submission capacity exhausted (" +
                      std::to_string(session.limits().max_submissions) + " pending)");
  // 4. Live host leases.
  for (const AllocationUse& use : graph.uses()) {
    const Allocation::HostState& h = use.allocation->host_state();
    if (h.write_lease || (use.writes && h.read_leases > 0))
      return busy_error(use_name(use) + " has a conflicting host mapping (" +
                        (h.write_lease ? "a write lease" : "a read lease, and the graph writes it") + ")");
  }
  // 5. A free slot: not occupied and no live observer of its last run; the next in turn
  // first (PreparedGraph::next_slot).
  Submission* slot = nullptr;
  const std::size_t slots = graph.slot_count();
  for (std::size_t k = 0; k < slots; ++k) {
    const std::size_t i = (graph.next_slot() + k) % slots;
    Submission& candidate = graph.slot(i);
    if (!candidate.occupied && candidate.observers.load(std::memory_order_acquire) == 0) {
      slot = &candidate;
      graph.next_slot() = (i + 1) % slots;
      break;
    }
  }
  if (slot == nullptr)
    return busy_error("prepared run slots are occupied; drop completed observers or reserve more slots");

  Submission& s = *slot;
  s.occupied = true;
  s.remaining = s.region_count;
  s.running = 0;
  s.blockers = 0;
  s.cancel_requested = false;
  s.failed = false;
  s.any_started = false;
  s.outcome = Status();
  s.accepted = Clock::now();
  s.launching = 0;
  for (std::uint32_t r = 0; r < s.region_count; ++r) {
    RegionRun& run = s.runs[r];
    run.state = RegionState::Pending;
    run.launched = false;
    run.abandoned = false;
    run.wait_count = 0;
  }

  s.producer_count = static_cast<std::uint32_t>(producers.size());
  s.producers_pending = 0;
  for (std::size_t i = 0; i < producers.size(); ++i) {
    Submission* p = producers[i];
    s.producers[i] = p;
    p->retain_observer();  // keeps the producer's outcome readable until we finish
    if (!p->terminal()) {
      ++s.producers_pending;
    } else if (!p->outcome.ok() && !s.failed) {
      s.failed = true;
      s.outcome = execution_error("producer submission failed: " + p->outcome.to_string());
    }
  }
  for (Submission* p = q.pending_head; p != nullptr; p = p->next)
    if (conflicts(p->graph(), graph)) ++s.blockers;
  for (const AllocationUse& use : graph.uses()) {
    Allocation::HostState& h = use.allocation->host_state();
    if (use.writes) ++h.pending_writers;
    else ++h.pending_readers;
  }
  ++q.occupancy;
  s.prev = q.pending_tail;
  s.next = nullptr;
  if (q.pending_tail) q.pending_tail->next = &s;
  else q.pending_head = &s;
  q.pending_tail = &s;
  uncount.scheduler = nullptr;  // pending now: finish_locked uncounts it

  graph.retain();        // the pending job owns its graph (engine item 9)
  s.retain_observer();   // the caller's Completion
  s.signal.store(Submission::kPending, std::memory_order_release);
  session.counters().add_submission();
  engine_stats_.add_submission();
  out_slot = &s;
  return Status();
}

}  // namespace accord::engine
