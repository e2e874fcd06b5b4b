// Runs prepared regions: admission against the two Busy bounds and host leases,
// whole-graph ordering against earlier pending submissions, lane exclusivity per
// session, native waits between same-device regions, worker threads, helping waiters,
// cancellation, failure (poison + quarantine), device loss, the watchdog and
// completion (engine items 4-10, 13).
//
// Locking (engine item 13). Scheduling state is per session (SessionSchedule, under
// its own mutex): pending submissions, blocker and producer counts, lanes, host-lease
// bookkeeping and lease waiters. Sessions never share allocations, so no ordering
// crosses sessions: submit and complete take their own session's lock, never an
// engine-wide one, and scan only that session's pending submissions. A session with a
// claimable region is put on the ReadyQueue, which workers take from; a waiting
// thread runs its own submission's regions first (and in inline mode, with no workers,
// its own session's). Engine-wide state is atomics (pending count, regions in flight, progress,
// shutdown) and three short locks off the common path: the ready queue (an O(1) push
// when host work is handed to a worker), quarantine (failures) and the session list
// (the watchdog and device loss visit sessions one at a time). Lock order: session
// list, then a session, then the ready queue or quarantine. Devices are called,
// listeners told and graphs released outside every lock; submit and complete never
// allocate. Every public member is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "accord/status.h"
#include "client/api/spare_core_probe.h"
#include "daemon/devices/device_registry.h"
#include "daemon/engine/lease_waiter.h"
#include "daemon/engine/prepared_graph.h"
#include "daemon/engine/ready_queue.h"
#include "daemon/engine/ref.h"
#include "daemon/engine/session.h"
#include "daemon/engine/stat_counters.h"
#include "daemon/engine/submission.h"

namespace accord::engine {

struct SchedulerOptions {
  // Worker threads; 0 means inline mode, where regions run only on threads that wait
  // (wait() or a blocking lease), which makes tests deterministic.
  std::size_t workers = 2;
  // A region running longer than this is failed with Execution and its device marked
  // lost (a hung fence never reports). The seed's default is 60 s.
  std::chrono::milliseconds watchdog_timeout{60'000};
  // Told once per lost device, on the thread that reported it, outside every engine
  // lock (accordd logs it). May be empty.
  std::function<void(devices::DeviceIndex, const Status&)> on_device_lost;
  // Told when a lost device serves again (a GPU executor restarted), the same way.
  std::function<void(devices::DeviceIndex, const std::string&)> on_device_recovered;
  // How long a waiting thread polls a device that completes by polling (a GPU) for its
  // own submission before it sleeps and leaves completion to the device's thread; also
  // the slice in which it blocks on a device that completes by waiting (an NPU's fence). A GPU
  // graph of small kernels ends within tens of microseconds; as long as this, polling
  // costs the waiter's core what cuStreamSynchronize's spin would.
  std::chrono::microseconds device_wait_spin{1000};
  // A thread waiting for its submission on a device that completes by polling first
  // sleeps through most of what the graph took before (PreparedGraph::forecast()), so
  // that many waiting tenants leave the cores to the threads that launch and complete.
  // Off by default: it saves a third of the waiting CPU but costs 1-3% of the graphs of
  // sixteen embedded tenants (tests/bench/RESULTS.md, session 28).
  bool forecast_sleep = false;
};

class Scheduler final : private devices::DeviceLossObserver {
 public:
  // Starts the workers and the watchdog; registers itself as `devices`' loss observer.
  Scheduler(devices::DeviceRegistry& devices, StatCounters& engine_stats, SchedulerOptions options);
  // Drains every pending submission, joins the workers, waits until every device
  // callback in flight has returned, then stops the watchdog. Idempotent; the owner
  // calls it while the scheduler is still reachable, since draining runs completion
  // code that finds the scheduler through the engine.
  void shutdown();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Result<Submission*> submit(PreparedGraph& graph, std::span<Submission* const> producers);
  // Polls every device that completes by polling (GPUs), reporting on this thread what
  // ended: for threads awake anyway with nothing to do (accordd's ring pollers). Cheap
  // when nothing runs there; never blocks.
  void poll_devices() noexcept;
  // As submit(), then runs on the calling thread every region of the new submission
  // that is ready now, host regions included, instead of waking a worker for them.
  // Never waits: regions not ready yet are left to the workers. For a caller that knows
  // the graph is short and would otherwise wait for a worker's wake-up (accordd's ring
  // pollers). The caller's observer must be kept until this returns. Listeners may be
  // told on this thread before it returns. scheduler_run_here.cpp.
  Result<Submission*> submit_and_run(PreparedGraph& graph, std::span<Submission* const> producers);
  Status wait(Submission& submission);
  Result<bool> wait_for(Submission& submission, std::chrono::nanoseconds timeout);
  void cancel(Submission& submission) noexcept;
  // Registers `listener` to be told when `submission` becomes terminal. Returns false,
  // registering nothing, when it already is. The listener must stay alive until told or
  // removed, and hold an observer of `submission` meanwhile.
  bool add_listener(Submission& submission, TerminalListener& listener) noexcept;
  // Unregisters `listener` if it was not told yet and returns true. Otherwise returns
  // false once the listener has been told (it may be being told on another thread: this
  // waits for that to end), so the caller may destroy it afterwards.
  bool remove_listener(Submission& submission, TerminalListener& listener) noexcept;

  // Host leases (engine item 8). A conflicting live lease is Busy at once; conflicting
  // pending device work is waited for when `block` (this thread sleeps, or helps in
  // inline mode), Busy otherwise. DeviceLost for a poisoned allocation or a lost device;
  // Unsupported when the allocation is not host mapped.
  Status acquire_lease(Allocation& allocation, LeaseMode mode, bool block);
  // The same lease without blocking anyone: true when granted now; false when it must
  // wait for device work, in which case `waiter` is queued and told once, when the lease
  // is granted or refused (LeaseWaiter::on_lease); the errors above when refused now.
  // `waiter` and `allocation` must stay alive until told or cancelled. In inline mode
  // the waiter is told when a waiting thread drives the conflicting work to its end.
  Result<bool> acquire_lease_or_wait(Allocation& allocation, LeaseMode mode, LeaseWaiter& waiter);
  // Takes `waiter` out of the queue if it was not told yet and returns true (nothing is
  // held). Otherwise returns false once it has been told (it may be being told on
  // another thread: this waits for that to end), so the caller may destroy it afterwards.
  bool cancel_lease_wait(LeaseWaiter& waiter) noexcept;
  void release_lease(Allocation& allocation, LeaseMode mode) noexcept;

  // Called by RegionRun when the device reports. `status` is OK, an error, or Cancelled.
  // may destroy the region's graph: callers touch nothing of it afterwards.
  void region_finished(RegionRun& run, Status status) noexcept { end_region(run, std::move(status), true); }

  // Regions picked and not yet reported (a watchdog-abandoned region no longer counts).
  std::uint32_t regions_in_flight() const noexcept { return inflight_.load(std::memory_order_acquire); }

  // Sessions join the list that the watchdog and device loss walk when constructed and
  // leave it when destroyed. Not on any hot path.
  void add_session(SessionSchedule& q) noexcept;
  void remove_session(SessionSchedule& q) noexcept;

 private:
  // What ending submissions leaves to do once the lock is released: listeners to tell
  // and graph references to drop (their destructors free native objects and memory).
  // Fixed capacity, so the completion path never allocates; a sweep that fills it
  // stops and is resumed after the flush.
  struct Deferred {
    static constexpr std::size_t kCapacity = 16;
    std::array<Submission*, kCapacity> ended{};
    std::array<TerminalListener*, kCapacity> listeners{};
    std::size_t count = 0;
    LeaseWaiter* leases = nullptr;  // waiters granted or refused, to tell (any number: intrusive)
    bool full() const noexcept { return count == kCapacity; }
  };

  // scheduler.cpp
  void worker_loop();
  // Claims the first ready region of the session (of `only`, when given), in submission
  // order. With `launch_only`, only a region whose device launches asynchronously (a
  // GPU): the submitting thread launches those itself; `*skipped` is set when a ready
  // region on a synchronous device (the host) was passed over and needs a worker.
  RegionRun* pick_locked(SessionSchedule& q, Submission* only, bool launch_only = false, bool* skipped = nullptr);
  // The region pick_locked would claim, claiming nothing (`claim` false), or claimed.
  RegionRun* find_ready_locked(SessionSchedule& q, Submission* only, bool claim, bool launch_only, bool* skipped);
  // Puts `q` on the ready queue if it has a claimable region and is not there already.
  void offer_locked(SessionSchedule& q) noexcept;
  void enqueue_locked(SessionSchedule& q) noexcept;
  // Takes sessions off the ready queue until one yields a region (claimed), or the
  // queue is empty (nullptr). `first` is one popped already.
  RegionRun* claim_from_ready_queue(SessionSchedule* first) noexcept;
  void execute(RegionRun& run) noexcept;
  // After a native launch returned: the region may now be waited on natively.
  void launch_returned(RegionRun& run) noexcept;
  void help_until_terminal(Submission& submission);
  // A device, among those running a region of `submission`, that a waiting
  // thread can block on (Device::completes_by_waiting). Session lock.
  std::optional<devices::DeviceIndex> waitable_device_locked(const Submission& submission) const noexcept;
  // Whether a device of `graph` completes by polling (a waiter then polls it).
  bool polls_devices(const PreparedGraph& graph) const noexcept;
  // Polls every device of `graph` once (a waiter's look at its own run).
  void poll_devices_of(const PreparedGraph& graph) noexcept;
  // Runs a ready region of `q`, or sleeps until progress_ moves on from `seen`; inline
  // mode only, where a waiting thread runs its own session's work (all that its wait or
  // lease can depend on: nothing orders across sessions). The caller reads `seen` before
  // it checks what it waits for, so that an end between its check and this call is not
  // slept through. Called with no lock held.
  void help_once(SessionSchedule& q, std::uint32_t seen);
  void notify_progress() noexcept;
  // A submission was accepted (true) or has finished (false); the last one to finish
  // during shutdown lets the workers go.
  void count_pending(bool accepted) noexcept;
  // The live sessions, each retained (the watchdog and device loss; allocates).
  std::vector<Ref<Session>> live_sessions();
  // scheduler_admission.cpp
  Status admit_locked(SessionSchedule& q, PreparedGraph& graph, std::span<Submission* const> producers,
                      Submission*& out_slot);
  static bool conflicts(const PreparedGraph& a, const PreparedGraph& b) noexcept;
  // scheduler_completion.cpp
  // `launched`: false when the region failed before reaching its device (a lost device
  // or poisoned memory): then nothing ran and nothing is poisoned.
  void end_region(RegionRun& run, Status status, bool launched) noexcept;
  void fail_locked(Submission& submission, std::uint32_t region, Status status) noexcept;
  bool can_finish(const Submission& submission) const noexcept;
  void finish_locked(SessionSchedule& q, Submission& submission, Deferred& deferred) noexcept;
  // Ends every submission of `q` that can end. Returns true when it stopped because
  // `deferred` is full, so the caller flushes and sweeps again.
  bool sweep_locked(SessionSchedule& q, Deferred& deferred) noexcept;
  // Sweeps and offers `q` to the ready queue, releases `lock`, tells listeners and drops
  // graphs; repeats while a sweep filled `deferred`. Returns with `lock` released; the
  // last graph reference may go in it, and with it the session: the caller touches
  // neither `q` nor anything of the session afterwards.
  void settle(SessionSchedule& q, std::unique_lock<std::mutex>& lock, Deferred& deferred) noexcept;
  void flush(Deferred& deferred) noexcept;
  // scheduler_leases.cpp
  // Grants `mode` on `allocation` if nothing conflicts: OK with `must_wait` false. OK with
  // `must_wait` true when only pending device work conflicts (nothing granted); the
  // refusal otherwise. The allocation's session lock.
  Status grant_lease_locked(Allocation& allocation, LeaseMode mode, bool& must_wait);
  // Dequeues every waiter of `q` whose lease is now granted or refused onto `told`.
  void settle_lease_waiters_locked(SessionSchedule& q, LeaseWaiter*& told) noexcept;
  // Tells each waiter of `told` its outcome; outside the lock.
  void tell_lease_waiters(LeaseWaiter* told) noexcept;
  // scheduler_watchdog.cpp
  void on_device_lost(devices::DeviceIndex device, const Status& cause) noexcept override;
  void on_device_recovered(devices::DeviceIndex device, const std::string& how) noexcept override;
  void watchdog_loop();
  // Devices to mark lost once the lock is released (a few per watchdog pass; the next
  // pass catches any beyond that).
  struct LostDevices {
    std::array<devices::DeviceIndex, 8> devices{};
    std::size_t count = 0;
    void add(devices::DeviceIndex d) noexcept {
      for (std::size_t i = 0; i < count; ++i)
        if (devices[i] == d) return;
      if (count < devices.size()) devices[count++] = d;
    }
  };
  // Counts the regions of `q` that outran the watchdog, adds their devices to `lost`
  // and, when `apply`, fails them.
  std::size_t expire_locked(SessionSchedule& q, Clock::time_point now, LostDevices& lost, bool apply);

  devices::DeviceRegistry& devices_;
  StatCounters& engine_stats_;
  SchedulerOptions options_;
  const bool inline_mode_;

  // Sessions with a claimable region; workers sleep on it.
  ReadyQueue ready_;
  // Pending submissions of every session: workers leave at shutdown once it is 0.
  std::atomic<std::size_t> pending_total_{0};
  std::atomic<bool> shutdown_{false};
  std::atomic<bool> shut_down_{false};  // shutdown() ran
  // Waiters dequeued and not yet told; cancel_lease_wait() waits for 0.
  std::atomic<std::uint32_t> leases_telling_{0};
  // Bumped on every region or submission end; inline-mode helpers sleep on it and
  // polling waiters watch it.
  std::atomic<std::uint32_t> progress_{0};
  std::atomic<std::uint32_t> progress_waiters_{0};
  SpareCoreProbe spare_cores_;  // whether a thread polling a GPU may keep its core
  std::vector<devices::DeviceIndex> polling_devices_;  // those that complete by polling; set at construction
  // Every live session, for the watchdog and device loss (never the hot path).
  std::mutex sessions_mu_;
  SessionSchedule* sessions_head_ = nullptr;
  // Graphs whose completion became uncertain: kept, with everything they retain,
  // until the scheduler is destroyed (engine item 10).
  std::mutex quarantine_mu_;
  std::vector<Ref<PreparedGraph>> quarantine_;
  std::vector<std::thread> workers_;
  // Regions picked whose end_region() has not returned yet; shutdown waits for zero
  // so that no device thread touches the scheduler after it is gone.
  std::atomic<std::uint32_t> inflight_{0};
  std::atomic<bool> draining_{false};
  std::mutex watchdog_mu_;
  std::condition_variable watchdog_cv_;
  bool watchdog_stop_ = false;  // watchdog_mu_
  std::thread watchdog_;
};

}  // namespace accord::engine
