// Submit-and-run: the submitting thread runs its own ready regions, as a waiting thread
// does in help_until_terminal(). Kept apart from submit() so that the common path is
// unchanged and this entry point stays one small function.
#include "daemon/engine/scheduler.h"

namespace accord::engine {

Result<Submission*> Scheduler::submit_and_run(PreparedGraph& graph, std::span<Submission* const> producers) {
  Submission* slot = nullptr;
  SessionSchedule& q = graph.session().schedule;
  std::unique_lock lock(q.mu);
  ACCORD_RETURN_IF_ERROR(admit_locked(q, graph, producers, slot));
  if (slot->failed) {  // a producer had failed already: it ends at once (as in submit())
    Deferred deferred;
    settle(q, lock, deferred);
    return slot;
  }
  // No worker is woken for what this thread runs (a wake-up costs 5-15 us on a small
  // VM, more than a short host region). A region whose end readies a later one of this
  // submission is left to this loop too; one that is not ready is started by whoever
  // ends its predecessor. The caller's observer keeps `slot` alive.
  while (RegionRun* run = pick_locked(q, slot)) {
    lock.unlock();
    execute(*run);
    lock.lock();
  }
  return slot;
}

}  // namespace accord::engine
