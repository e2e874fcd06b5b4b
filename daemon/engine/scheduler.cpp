// Workers, region selection and helping waiters. Admission is in
// scheduler_admission.cpp, completion and failure in scheduler_completion.cpp, host
// leases in scheduler_leases.cpp.
#include "daemon/engine/scheduler.h"

#include "daemon/engine/futex.h"

namespace accord::engine {
namespace {

constexpr std::chrono::microseconds kWaitSpin{20};

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

Scheduler::Scheduler(devices::DeviceRegistry& devices, StatCounters& engine_stats, std::size_t workers)
    : devices_(devices), engine_stats_(engine_stats), inline_mode_(workers == 0) {
  quarantine_.reserve(16);
  workers_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

Scheduler::~Scheduler() { shutdown(); }

void Scheduler::shutdown() {
  {
    std::unique_lock lock(mu_);
    if (shutdown_ && workers_.empty()) return;
    shutdown_ = true;
    // Inline mode has no workers: the destroying thread drains what is left.
    if (inline_mode_)
      while (pending_head_ != nullptr) help_once(lock);
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void Scheduler::worker_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (RegionRun* run = pick_locked(nullptr)) {
      // Independent regions of this graph, or other submissions, may be ready too:
      // hand them to an idle peer rather than leaving them for after this region.
      const bool wake_peer = idle_workers_ > 0 && (run->submission->graph().parallel() || pending_count_ > 1);
      lock.unlock();
      if (wake_peer) work_cv_.notify_one();
      execute(*run);
      lock.lock();
      continue;
    }
    if (shutdown_ && pending_head_ == nullptr) return;
    ++idle_workers_;
    work_cv_.wait(lock);
    --idle_workers_;
  }
}

// Scans pending submissions in submission order, so earlier ones get lanes first, and
// claims the first region whose predecessors are done and whose lane is idle for its
// session (engine item 4).
RegionRun* Scheduler::pick_locked(Submission* only) {
  for (Submission* s = only ? only : pending_head_; s != nullptr; s = only ? nullptr : s->next) {
    if (!s->occupied || s->blockers != 0 || s->producers_pending != 0 || s->cancel_requested ||
        s->failed)
      continue;
    Session& session = s->graph().session();
    const auto& regions = s->graph().regions();
    for (std::uint32_t r = 0; r < s->region_count; ++r) {
      RegionRun& run = s->runs[r];
      if (run.state != RegionState::Pending) continue;
      const PreparedRegion& region = regions[r];
      if (session.lane_busy[region.lane_slot]) continue;
      bool ready = true;
      for (std::uint32_t p : region.predecessors) {
        if (s->runs[p].state != RegionState::Done) {
          ready = false;
          break;
        }
      }
      if (!ready) continue;
      run.state = RegionState::Running;
      session.lane_busy[region.lane_slot] = true;
      ++s->running;
      run.started = Clock::now();
      if (!s->any_started) {
        s->any_started = true;
        s->first_start = run.started;
      }
      return &run;
    }
  }
  return nullptr;
}

void Scheduler::execute(RegionRun& run) noexcept {
  PreparedGraph& graph = run.submission->graph();
  // An allocation may have been poisoned by another graph after this one was accepted:
  // never run device work on memory whose state is uncertain.
  for (const AllocationUse& use : graph.uses()) {
    if (use.allocation->poisoned()) {
      region_finished(run, device_lost_error("allocation is poisoned: " + use.allocation->poison_message()));
      return;  // may destroy run's graph: no access below
    }
  }
  const PreparedRegion& region = graph.regions()[run.region];
  devices_.at(region.device).launch(*region.native, devices::RegionWaits{}, run);
  // may destroy run's graph: no access below
}

Status Scheduler::wait(Submission& submission) {
  if (!submission.terminal()) help_until_terminal(submission);
  return submission.outcome;
}

// The waiting thread runs ready regions of its own submission itself (seed 3.5), which
// removes a thread hand-off from the common submit-then-wait pattern. The caller holds
// an observer, so `submission` outlives every execute() below.
void Scheduler::help_until_terminal(Submission& submission) {
  std::unique_lock lock(mu_);
  while (!submission.terminal()) {
    if (inline_mode_) {
      help_once(lock);
      continue;
    }
    if (RegionRun* run = pick_locked(&submission)) {
      lock.unlock();
      execute(*run);
      lock.lock();
      continue;
    }
    lock.unlock();
    // A region of ours is usually running on a worker and ends within microseconds:
    // spin briefly before sleeping, so a short region costs no futex round trip
    // (sleeping and being woken costs 5-10 us on a 2-core VM).
    const auto spin_until = Clock::now() + kWaitSpin;
    while (!submission.terminal() && Clock::now() < spin_until) cpu_relax();
    if (!submission.terminal()) {
      submission.waiters.fetch_add(1);
      if (!submission.terminal()) futex_wait(submission.signal, Submission::kPending);
      submission.waiters.fetch_sub(1);
    }
    lock.lock();
  }
}

void Scheduler::help_once(std::unique_lock<std::mutex>& lock) {
  if (RegionRun* run = pick_locked(nullptr)) {
    lock.unlock();
    execute(*run);
    lock.lock();
    return;
  }
  const std::uint32_t seen = progress_.load();
  lock.unlock();
  progress_waiters_.fetch_add(1);
  futex_wait(progress_, seen);
  progress_waiters_.fetch_sub(1);
  lock.lock();
}

void Scheduler::notify_progress_locked() noexcept {
  progress_.fetch_add(1);
  if (progress_waiters_.load() > 0) futex_wake_all(progress_);
}

Result<bool> Scheduler::wait_for(Submission& submission, std::chrono::nanoseconds timeout) {
  // Never helps and never cancels (seed 2.16): a timeout leaves the work as it was.
  const auto deadline = Clock::now() + timeout;
  while (!submission.terminal()) {
    const auto left = deadline - Clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return false;
    submission.waiters.fetch_add(1);
    if (!submission.terminal())
      futex_wait(submission.signal, Submission::kPending,
                 std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    submission.waiters.fetch_sub(1);
  }
  if (!submission.outcome.ok()) return submission.outcome;
  return true;
}

void Scheduler::cancel(Submission& submission) noexcept {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!submission.occupied) return;
    submission.cancel_requested = true;
    sweep_locked();
    notify_progress_locked();
    wake = idle_workers_ > 0;
  }
  if (wake) work_cv_.notify_all();
}

}  // namespace accord::engine
