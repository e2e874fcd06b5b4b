// Workers, the ready queue, region selection and helping waiters. Admission is in
// scheduler_admission.cpp, completion and failure in scheduler_completion.cpp, host
// leases in scheduler_leases.cpp, the session list, watchdog and device loss in
// scheduler_watchdog.cpp.
#include "daemon/engine/scheduler.h"

#include <sched.h>

#include <utility>

#include "client/api/futex.h"
#include "client/api/thread_name.h"
#include "client/api/wait_forecast.h"

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

SessionSchedule& schedule_of(const Submission& s) noexcept { return s.graph().session().schedule; }

}  // namespace

Scheduler::Scheduler(devices::DeviceRegistry& devices, StatCounters& engine_stats, SchedulerOptions options)
    : devices_(devices),
      engine_stats_(engine_stats),
      options_(std::move(options)),
      inline_mode_(options_.workers == 0) {
  quarantine_.reserve(16);
  for (std::size_t d = 0; d < devices_.size(); ++d)
    if (devices_.at(static_cast<devices::DeviceIndex>(d)).completes_by_polling())
      polling_devices_.push_back(static_cast<devices::DeviceIndex>(d));
  devices_.set_loss_observer(this);
  workers_.reserve(options_.workers);
  for (std::size_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

Scheduler::~Scheduler() {
  shutdown();
  devices_.set_loss_observer(nullptr);
  // Quarantined graphs go while every member is alive: the last of them may release
  // a session, which leaves the session list.
  std::vector<Ref<PreparedGraph>> quarantined;
  {
    std::lock_guard lock(quarantine_mu_);
    quarantined.swap(quarantine_);
  }
  quarantined.clear();
}

void Scheduler::shutdown() {
  if (shut_down_.exchange(true)) return;
  shutdown_.store(true);
  // Inline mode has no workers: the destroying thread drains what is left, session by
  // session.
  if (inline_mode_) {
    while (pending_total_.load() != 0) {
      for (const Ref<Session>& session : live_sessions()) {
        SessionSchedule& q = session->schedule;
        for (;;) {
          const std::uint32_t seen = progress_.load();
          {
            std::lock_guard lock(q.mu);
            if (q.pending_head == nullptr) break;
          }
          help_once(q, seen);
        }
      }
    }
  }
  ready_.wake_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  // A device thread may still be inside end_region() for the last region (telling
  // listeners, releasing graphs, notifying): wait until every one has returned. The
  // watchdog keeps running meanwhile, so a region that never reports is failed.
  draining_.store(true);
  for (std::uint32_t n = inflight_.load(); n != 0; n = inflight_.load())
    futex_wait(inflight_, n, std::chrono::milliseconds(1));
  {
    std::lock_guard lock(watchdog_mu_);
    watchdog_stop_ = true;
  }
  watchdog_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  // Entries left on the ready queue (sessions whose work others took) hold their
  // sessions: let them go.
  while (SessionSchedule* q = ready_.try_pop()) {
    {
      std::lock_guard lock(q->mu);
      q->queued = false;
    }
    q->owner.release();
  }
}

void Scheduler::count_pending(bool accepted) noexcept {
  if (accepted) {
    pending_total_.fetch_add(1);
    return;
  }
  if (pending_total_.fetch_sub(1) == 1 && shutdown_.load()) {
    ready_.wake_all();  // the workers may leave now
    notify_progress();  // an inline-mode shutdown drains on progress_
  }
}

void Scheduler::worker_loop() {
  name_this_thread("engine-worker");
  for (;;) {
    SessionSchedule* q = ready_.pop_or_wait([this] { return shutdown_.load() && pending_total_.load() == 0; });
    if (q == nullptr) return;
    if (RegionRun* run = claim_from_ready_queue(q)) execute(*run);
  }
}

RegionRun* Scheduler::claim_from_ready_queue(SessionSchedule* q) noexcept {
  for (; q != nullptr; q = ready_.try_pop()) {
    RegionRun* run = nullptr;
    {
      std::lock_guard lock(q->mu);
      q->queued = false;
      run = pick_locked(*q, nullptr);
      // More of this session may be ready (independent regions, other submissions): it
      // goes back at the tail, so a peer takes it while other sessions get their turn.
      if (run != nullptr) offer_locked(*q);
    }
    // The queue's reference; a claimed region's graph keeps the session alive anyway.
    q->owner.release();  // may destroy the session: no access below
    if (run != nullptr) return run;
  }
  return nullptr;
}

void Scheduler::offer_locked(SessionSchedule& q) noexcept {
  // Inline mode has no ready queue: waiting threads run their own session's work.
  if (inline_mode_ || q.queued || find_ready_locked(q, nullptr, false, false, nullptr) == nullptr) return;
  enqueue_locked(q);
}

void Scheduler::enqueue_locked(SessionSchedule& q) noexcept {
  q.queued = true;
  q.owner.retain();  // released by whoever pops it
  ready_.push(q);
}

RegionRun* Scheduler::pick_locked(SessionSchedule& q, Submission* only, bool launch_only, bool* skipped) {
  return find_ready_locked(q, only, true, launch_only, skipped);
}

// Scans the session's pending submissions in submission order, so earlier ones get
// lanes first, for the first region whose lane is idle for the session and whose
// predecessors are done, or, on a device that waits natively, launched on that same
// device: those are handed to the device as RegionWaits (engine item 4; ARCHITECTURE.md,
// native waits). Cross-device and cross-submission order is always resolved here.
RegionRun* Scheduler::find_ready_locked(SessionSchedule& q, Submission* only, bool claim, bool launch_only,
                                        bool* skipped) {
  for (Submission* s = only ? only : q.pending_head; s != nullptr; s = only ? nullptr : s->next) {
    if (!s->occupied || s->blockers != 0 || s->producers_pending != 0 || s->cancel_requested || s->failed)
      continue;
    const auto& regions = s->graph().regions();
    for (std::uint32_t r = 0; r < s->region_count; ++r) {
      RegionRun& run = s->runs[r];
      if (run.state != RegionState::Pending) continue;
      const PreparedRegion& region = regions[r];
      if (q.lane_busy[region.lane_slot]) continue;
      bool ready = true;
      if (claim) run.wait_count = 0;
      for (std::uint32_t p : region.predecessors) {
        const RegionRun& before = s->runs[p];
        if (before.state == RegionState::Done) continue;
        if (region.native_waits && before.state == RegionState::Running && before.launched &&
            regions[p].device == region.device) {
          if (claim) run.waits[run.wait_count++] = devices::RegionWait{regions[p].native.get(), s->index()};
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
      if (!claim) return &run;
      run.state = RegionState::Running;
      run.launched = false;
      if (region.native_waits) ++s->launching;
      q.lane_busy[region.lane_slot] = 1;
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
  Submission& s = *run.submission;
  SessionSchedule& q = schedule_of(s);
  std::unique_lock lock(q.mu);
  --s.launching;
  run.launched = true;
  // Successors on the same device may wait on this region now, and if the region
  // already ended, its submission may end here and unblock later ones.
  if (s.launching == 0 && can_finish(s)) {
    settle(q, lock, deferred);  // may destroy s and the session: no access below
    notify_progress();
    return;
  }
  offer_locked(q);
}

Status Scheduler::wait(Submission& submission) {
  if (!submission.terminal()) help_until_terminal(submission);
  return submission.outcome;
}

// The waiting thread runs ready regions of its own submission itself (seed 3.5), which
// removes a thread hand-off from the common submit-then-wait pattern. The caller holds
// an observer, so `submission` (and its session) outlives every execute() below.
void Scheduler::help_until_terminal(Submission& submission) {
  SessionSchedule& q = schedule_of(submission);
  if (inline_mode_) {
    for (;;) {
      // Before the check: a submission that ends right after it moves progress_ on.
      const std::uint32_t seen = progress_.load();
      if (submission.terminal()) return;
      help_once(q, seen);
    }
  }
  std::unique_lock lock(q.mu);
  const bool polls = polls_devices(submission.graph());
  const bool forecasting = polls && options_.forecast_sleep;
  // Whether this wait may sleep through the forecast: not when it is one of the waits
  // that measure the graph (WaitForecast::next_wait_measures).
  bool may_sleep = forecasting && !submission.graph().forecast().next_wait_measures();
  // How this wait saw the end, for the forecast: a waiter that woke to a run already
  // over slept too long; one that slept cannot tell how much its sleep delayed the run
  // (on a quiet machine a 7 us graph went on to take 140 us, every later waiter sleeping
  // 100 us of it); one that blocked saw the end late (another thread finished the run).
  // Only a wait that watched the whole run measures it.
  bool overslept = false;
  bool watched_whole_run = true;
  while (!submission.terminal()) {
    if (RegionRun* run = pick_locked(q, &submission)) {
      lock.unlock();
      execute(*run);
      lock.lock();
      continue;
    }
    const std::uint32_t seen = progress_.load();
    const std::optional<devices::DeviceIndex> blocking = waitable_device_locked(submission);
    const Clock::time_point accepted = submission.accepted;
    lock.unlock();
    // Nothing of ours to run here and a device still at it: asleep through most of what
    // this graph usually takes (nobody is asked to wake us), once per wait, then the
    // spin below sees it end. Polling devices only: the others wake their waiters.
    if (std::exchange(may_sleep, false)) {
      const std::int64_t sleep = submission.graph().forecast().sleep_ns(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - accepted).count());
      if (sleep > 0) {
        sleep_precisely(sleep);
        watched_whole_run = false;
        // A run that ended during the sleep may wait for someone to look at the device:
        // one look now tells an overslept run (which lowers the forecast) from one still
        // going.
        poll_devices_of(submission.graph());
        overslept = submission.terminal();
        lock.lock();
        continue;
      }
    }
    // A region of ours is usually running on a worker or a device and ends within
    // microseconds: spin briefly before sleeping, so a short region costs no futex round
    // trip (sleeping and being woken costs 5-10 us on a 2-core VM). A device that
    // completes by polling (a GPU's flags) is polled here, so this thread sees its region
    // end without the device's thread waking it; then it looks for what became ready.
    // With every core taken (sixteen tenants polling on sixteen cores), a poller gives its
    // core up between looks: the thread that would end its wait (a GPU executor's
    // consumer, woken to launch) is otherwise queued behind pollers for a scheduler slice.
    const bool yield = polls && !spare_cores_.spare();
    const auto spin_until = Clock::now() + (polls ? options_.device_wait_spin : kWaitSpin);
    while (!submission.terminal() && Clock::now() < spin_until) {
      if (polls) {
        poll_devices_of(submission.graph());
        if (progress_.load() != seen) break;
      }
      if (yield) sched_yield();
      else cpu_relax();
    }
    if (polls) spare_cores_.refresh();  // after the wait, never on its path (a procfs read at most every 10 ms)
    // A region of ours runs on a device whose end this thread can block on (an NPU's
    // fence): block there, so the device wakes this thread itself, instead of waking its
    // completion thread, which would then wake this one.
    if (blocking && !submission.terminal() && progress_.load() == seen &&
        devices_.at(*blocking).wait_for_completion(options_.device_wait_spin) != devices::CompletionWait::Idle) {
      watched_whole_run = false;
      lock.lock();
      continue;
    }
    if (!submission.terminal() && !(polls && progress_.load() != seen)) {
      watched_whole_run = false;
      submission.waiters.fetch_add(1);
      if (!submission.terminal()) futex_wait(submission.signal, Submission::kPending);
      submission.waiters.fetch_sub(1);
    }
    lock.lock();
  }
  // Learnt here, from how this wait saw the end, rather than where the submission
  // finishes (see above).
  if (forecasting && submission.outcome.ok()) {
    WaitForecast& forecast = submission.graph().forecast();
    if (overslept) forecast.overslept();
    else if (watched_whole_run)
      forecast.record(
          std::chrono::duration_cast<std::chrono::nanoseconds>(submission.finished - submission.accepted).count());
  }
}

std::optional<devices::DeviceIndex> Scheduler::waitable_device_locked(const Submission& submission) const noexcept {
  const std::vector<PreparedRegion>& regions = submission.graph().regions();
  for (std::size_t r = 0; r < regions.size(); ++r)
    if (submission.runs[r].state == RegionState::Running && devices_.at(regions[r].device).completes_by_waiting())
      return regions[r].device;
  return std::nullopt;
}

void Scheduler::poll_devices() noexcept {
  for (devices::DeviceIndex d : polling_devices_) devices_.at(d).poll_completions();
}

void Scheduler::poll_devices_of(const PreparedGraph& graph) noexcept {
  for (devices::DeviceIndex d : graph.devices()) devices_.at(d).poll_completions();
}

bool Scheduler::polls_devices(const PreparedGraph& graph) const noexcept {
  for (devices::DeviceIndex d : graph.devices())
    if (devices_.at(d).completes_by_polling()) return true;
  return false;
}

void Scheduler::help_once(SessionSchedule& q, std::uint32_t seen) {
  RegionRun* run = nullptr;
  {
    std::lock_guard lock(q.mu);
    run = pick_locked(q, nullptr);
  }
  if (run != nullptr) {
    execute(*run);
    return;
  }
  progress_waiters_.fetch_add(1);
  futex_wait(progress_, seen);
  progress_waiters_.fetch_sub(1);
}

void Scheduler::notify_progress() noexcept {
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
  // The caller holds an observer: the session outlives this call.
  Deferred deferred;
  SessionSchedule& q = schedule_of(submission);
  std::unique_lock lock(q.mu);
  if (!submission.occupied) return;
  submission.cancel_requested = true;
  // Ending it may unblock later submissions: settle offers the session again.
  settle(q, lock, deferred);
  notify_progress();
}

}  // namespace accord::engine
