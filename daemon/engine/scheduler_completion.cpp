// Region and submission endings: success, failure (poison + quarantine, engine item
// 10), cancellation, and releasing later submissions that were ordered behind.
#include <string>
#include <utility>

#include "daemon/engine/futex.h"
#include "daemon/engine/scheduler.h"

namespace accord::engine {

void Scheduler::region_finished(RegionRun& run, Status status) noexcept {
  const Clock::time_point end = Clock::now();
  bool wake_one = false;
  bool wake_all = false;
  {
    std::lock_guard lock(mu_);
    Submission& s = *run.submission;
    PreparedGraph& graph = s.graph();
    Session& session = graph.session();
    const PreparedRegion& region = graph.regions()[run.region];
    session.lane_busy[region.lane_slot] = false;
    run.state = RegionState::Done;
    --s.running;
    --s.remaining;
    const bool ok = status.ok();
    const bool cancelled = !ok && status.kind() == ErrorKind::Cancelled;
    if (ok) {
      session.counters().add_copy(region.lane, region.copy_bytes);
      engine_stats_.add_copy(region.lane, region.copy_bytes);
    } else if (cancelled) {
      s.cancel_requested = true;
    } else {
      fail_locked(s, run.region, std::move(status));
    }
    session.trace.record(run.started, end, region.lane, ok ? region.copy_bytes : 0, !ok && !cancelled);
    const bool more_work = pending_count_ > 1 || graph.parallel() || s.remaining > 0;
    if (can_finish(s)) sweep_locked();  // may destroy s and graph: no access below
    notify_progress_locked();
    wake_all = shutdown_ && pending_head_ == nullptr;
    wake_one = idle_workers_ > 0 && pending_head_ != nullptr && more_work;
  }
  if (wake_all) work_cv_.notify_all();
  else if (wake_one) work_cv_.notify_one();
}

void Scheduler::fail_locked(Submission& s, std::uint32_t region, Status status) noexcept {
  PreparedGraph& graph = s.graph();
  const std::string source = status.to_string();
  if (!s.failed) {
    s.failed = true;
    s.outcome = execution_error("executing graph region " + std::to_string(region) + " (" +
                                std::string(to_string(graph.regions()[region].lane)) +
                                " lane): " + source);
  }
  if (graph.quarantined()) return;
  // Completion is uncertain: every allocation the graph uses may have been half
  // written, so all of them are poisoned and kept, never freed under possible DMA.
  graph.quarantine();
  for (const AllocationUse& use : graph.uses())
    use.allocation->poison("a graph using this allocation failed: " + source);
  quarantine_.push_back(Ref<PreparedGraph>::retain(&graph));
}

bool Scheduler::add_listener(Submission& s, TerminalListener& listener) noexcept {
  std::lock_guard lock(mu_);
  if (s.terminal()) return false;
  listener.next_listener = s.listeners;
  s.listeners = &listener;
  return true;
}

bool Scheduler::remove_listener(Submission& s, TerminalListener& listener) noexcept {
  std::lock_guard lock(mu_);
  for (TerminalListener** link = &s.listeners; *link != nullptr; link = &(*link)->next_listener) {
    if (*link == &listener) {
      *link = listener.next_listener;
      listener.next_listener = nullptr;
      return true;
    }
  }
  return false;
}

bool Scheduler::can_finish(const Submission& s) const noexcept {
  // A cancelled or failed submission ends once its running regions drained; its
  // unstarted regions are skipped, even those still waiting on producers.
  return s.occupied && s.running == 0 && (s.remaining == 0 || s.cancel_requested || s.failed);
}

void Scheduler::sweep_locked() noexcept {
  // Finishing one submission can fail its consumers (a failed producer) or let a
  // cancelled one end; repeat until nothing more can finish.
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (Submission* s = pending_head_; s != nullptr; s = s->next) {
      if (can_finish(*s)) {
        finish_locked(*s);
        progressed = true;
        break;
      }
    }
  }
}

void Scheduler::finish_locked(Submission& s) noexcept {
  PreparedGraph& graph = s.graph();
  Session& session = graph.session();
  // Unlink; release later submissions that were ordered behind this one.
  if (s.prev) s.prev->next = s.next;
  else pending_head_ = s.next;
  if (s.next) s.next->prev = s.prev;
  else pending_tail_ = s.prev;
  --pending_count_;
  for (Submission* t = s.next; t != nullptr; t = t->next)
    if (conflicts(graph, t->graph())) --t->blockers;
  s.prev = s.next = nullptr;
  for (const AllocationUse& use : graph.uses()) {
    Allocation::HostState& h = use.allocation->host_state();
    if (use.writes) --h.pending_writers;
    else --h.pending_readers;
  }
  --session.occupancy;

  if (!s.failed && s.cancel_requested) s.outcome = cancelled_error();
  s.finished = Clock::now();
  s.occupied = false;
  // Consumers waiting on this producer.
  for (Submission* t = pending_head_; t != nullptr; t = t->next) {
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
  s.signal.store(Submission::kTerminal);
  if (s.waiters.load() > 0) futex_wake_all(s.signal);
  for (TerminalListener* l = std::exchange(s.listeners, nullptr); l != nullptr;) {
    TerminalListener* next = std::exchange(l->next_listener, nullptr);
    l->on_terminal(s);
    l = next;
  }
  if (lease_waiters_ > 0) host_cv_.notify_all();
  // Destructors reached from here (graph, allocations, kernels, session) never take the
  // scheduler lock, so releasing under it is safe.
  graph.release();  // may destroy s and graph: no access below
}

}  // namespace accord::engine
