// Workers, region selection and helping waiters. Admission is in
// scheduler_admission.cpp, completion and failure in scheduler_completion.cpp, host
// leases in scheduler_leases.cpp.
#include "daemon/engine/scheduler.h"

#include "client/api/futex.h"

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

Scheduler::Scheduler(devices::DeviceRegistry& devices, StatCounters& engine_stats, SchedulerOptions options)
    : devices_(devices),
      engine_stats_(engine_stats),
      options_(std::move(options)),
      inline_mode_(options_.workers == 0) {
  quarantine_.reserve(16);
  devices_.set_loss_observer(this);
  workers_.reserve(options_.workers);
  for (std::size_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

Scheduler::~Scheduler() {
  shutdown();
  devices_.set_loss_observer(nullptr);
}

void Scheduler::shutdown() {
  {
    std::unique_lock lock(mu_);
    if (shutdown_ && !watchdog_.joinable()) return;
    shutdown_ = true;
    // Inline mode has no workers: the destroying thread drains what is left.
    if (inline_mode_)
      while (pending_head_ != nullptr) help_once(lock);
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  // A device thread may still be inside end_region() for the last region (telling
  // listeners, releasing graphs, notifying): wait until every one has returned. The
  // watchdog keeps running meanwhile, so a region that never reports is failed.
  draining_.store(true);
  for (std::uint32_t n = inflight_.load(); n != 0; n = inflight_.load())
    futex_wait(inflight_, n, std::chrono::milliseconds(1));
  {
    std::lock_guard lock(mu_);
    watchdog_stop_ = true;
  }
  watchdog_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
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
// claims the first region whose lane is idle for its session and whose predecessors
// are done, or, on a device that waits natively, launched on that same device: those
// are handed to the device as RegionWaits (engine item 4; ARCHITECTURE.md, native
// waits). Cross-device and cross-submission order is always resolved here.
RegionRun* Scheduler::pick_locked(Submission* only, bool launch_only, bool* skipped) {
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
      run.wait_count = 0;
      for (std::uint32_t p : region.predecessors) {
        const RegionRun& before = s->runs[p];
        if (before.state == RegionState::Done) continue;
        if (region.native_waits && before.state == RegionState::Running && before.launched &&
            regions[p].device == region.device) {
          run.waits[run.wait_count++] = devices::RegionWait{regions[p].native.get(), s->index()};
          continue;
        }
        ready = false;
        break;
      }
      if (!ready) continue;
      if (launch_only && devices_.at(region.device).launches_synchronously()) {
        *skipped = true;
        continue;
      }
      run.state = RegionState::Running;
      run.launched = false;
      if (region.native_waits) ++s->launching;
      session.lane_busy[region.lane_slot] = 1;
      inflight_.fetch_add(1, std::memory_order_relaxed);
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
  Submission& s = *run.submission;
  PreparedGraph& graph = s.graph();
  const PreparedRegion& region = graph.regions()[run.region];
  // A device may have been lost, or an allocation poisoned by another graph, after
  // this one was accepted: never run device work there. Nothing of this region ran,
  // so the submission fails with DeviceLost and poisons nothing (engine item 10).
  if (Status lost = graph.check_devices(devices_); !lost.ok()) {
    end_region(run, std::move(lost), false);
    return;  // may destroy run's graph: no access below
  }
  for (const AllocationUse& use : graph.uses()) {
    if (use.allocation->poisoned()) {
      end_region(run, device_lost_error("allocation is poisoned: " + use.allocation->poison_message()), false);
      return;  // may destroy run's graph: no access below
    }
  }
  devices::Device& device = devices_.at(region.device);
  const devices::RegionWaits waits{s.index(), {run.waits.get(), run.wait_count}};
  if (!region.native_waits) {
    device.launch(*region.native, waits, run);
    return;  // may destroy run's graph: no access below
  }
  // s.launching keeps the submission (and so the graph) alive across the call.
  device.launch(*region.native, waits, run);
  launch_returned(run);
}

void Scheduler::launch_returned(RegionRun& run) noexcept {
  Deferred deferred;
  bool wake = false;
  bool wake_all = false;
  {
    std::unique_lock lock(mu_);
    Submission& s = *run.submission;
    --s.launching;
    run.launched = true;
    // Successors on the same device may wait on this region now, and if the region
    // already ended, its submission may end here and unblock later ones: a peer (this
    // thread may be a waiter about to return) has to look.
    if (s.launching == 0 && can_finish(s)) {
      settle(lock, deferred);  // may destroy s: no access below
      lock.lock();
      notify_progress_locked();
    }
    wake = idle_workers_ > 0 && pending_head_ != nullptr;
    wake_all = shutdown_ && pending_head_ == nullptr;  // the workers may exit now
  }
  if (wake_all) work_cv_.notify_all();
  else if (wake) work_cv_.notify_one();
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
    const std::uint32_t seen = progress_.load();
    const std::optional<devices::DeviceIndex> blocking = waitable_device_locked(submission);
    lock.unlock();
    // A region of ours is usually running on a worker or a device and ends within
    // microseconds: spin briefly before sleeping, so a short region costs no futex round
    // trip (sleeping and being woken costs 5-10 us on a 2-core VM). A device that
    // completes by polling (a GPU's flags) is polled here, so this thread sees its region
    // end without the device's thread waking it; then it looks for what became ready.
    const bool polls = polls_devices(submission.graph());
    const auto spin_until = Clock::now() + (polls ? options_.device_wait_spin : kWaitSpin);
    while (!submission.terminal() && Clock::now() < spin_until) {
      if (polls) {
        for (devices::DeviceIndex d : submission.graph().devices()) devices_.at(d).poll_completions();
        if (progress_.load() != seen) break;
      }
      cpu_relax();
    }
    // A region of ours runs on a device whose end this thread can block on (an NPU's
    // fence): block there, so the device wakes this thread itself, instead of waking its
    // completion thread, which would then wake this one.
    if (blocking && !submission.terminal() && progress_.load() == seen &&
        devices_.at(*blocking).wait_for_completion(options_.device_wait_spin) != devices::CompletionWait::Idle) {
      lock.lock();
      continue;
    }
    if (!submission.terminal() && !(polls && progress_.load() != seen)) {
      submission.waiters.fetch_add(1);
      if (!submission.terminal()) futex_wait(submission.signal, Submission::kPending);
      submission.waiters.fetch_sub(1);
    }
    lock.lock();
  }
}

std::optional<devices::DeviceIndex> Scheduler::waitable_device_locked(const Submission& submission) const noexcept {
  const std::vector<PreparedRegion>& regions = submission.graph().regions();
  for (std::size_t r = 0; r < regions.size(); ++r)
    if (submission.runs[r].state == RegionState::Running && devices_.at(regions[r].device).completes_by_waiting())
      return regions[r].device;
  return std::nullopt;
}

bool Scheduler::polls_devices(const PreparedGraph& graph) const noexcept {
  for (devices::DeviceIndex d : graph.devices())
    if (devices_.at(d).completes_by_polling()) return true;
  return false;
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
  Deferred deferred;
  bool wake = false;
  std::unique_lock lock(mu_);
  if (!submission.occupied) return;
  submission.cancel_requested = true;
  notify_progress_locked();
  wake = idle_workers_ > 0;  // cancelling may end submissions that others wait behind
  settle(lock, deferred);
  if (wake) work_cv_.notify_all();
}

}  // namespace accord::engine
