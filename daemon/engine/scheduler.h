// Runs prepared regions: admission against the two Busy bounds and host leases,
// whole-graph ordering against earlier pending submissions, lane exclusivity per
// session, worker threads, helping waiters, cancellation, failure (poison + quarantine)
// and completion (engine items 4-10). One mutex guards all scheduling state; the
// submit and complete paths take it once and never allocate.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/device_registry.h"
#include "daemon/engine/prepared_graph.h"
#include "daemon/engine/ref.h"
#include "daemon/engine/session.h"
#include "daemon/engine/stat_counters.h"
#include "daemon/engine/submission.h"

namespace accord::engine {

class Scheduler {
 public:
  // Starts `workers` threads; 0 means inline mode, where regions run only on threads
  // that wait (wait() or a blocking lease), which makes tests deterministic.
  Scheduler(devices::DeviceRegistry& devices, StatCounters& engine_stats, std::size_t workers);
  // Drains every pending submission, then joins the workers. Idempotent; the owner
  // calls it while the scheduler is still reachable, since draining runs completion
  // code that finds the scheduler through the engine.
  void shutdown();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Result<Submission*> submit(PreparedGraph& graph, std::span<Submission* const> producers);
  Status wait(Submission& submission);
  Result<bool> wait_for(Submission& submission, std::chrono::nanoseconds timeout);
  void cancel(Submission& submission) noexcept;
  // Registers `listener` to be told when `submission` becomes terminal. Returns false,
  // registering nothing, when it already is. The listener must stay alive until told or
  // removed.
  bool add_listener(Submission& submission, TerminalListener& listener) noexcept;
  // Unregisters `listener` if it was not told yet. Returns true if it was removed.
  bool remove_listener(Submission& submission, TerminalListener& listener) noexcept;

  Status acquire_lease(Allocation& allocation, LeaseMode mode, bool block);
  void release_lease(Allocation& allocation, LeaseMode mode) noexcept;

  // Called by RegionRun when the device reports. `status` is OK, an error, or Cancelled.
  // may destroy the region's graph: callers touch nothing of it afterwards.
  void region_finished(RegionRun& run, Status status) noexcept;

  // Runs `fn` under the scheduler lock (trace start/stop and similar rare calls).
  template <class Fn>
  auto locked(Fn&& fn) {
    std::lock_guard lock(mu_);
    return fn();
  }

 private:
  // scheduler.cpp
  void worker_loop();
  RegionRun* pick_locked(Submission* only);
  void execute(RegionRun& run) noexcept;
  void help_until_terminal(Submission& submission);
  // Runs ready work of any submission or sleeps until progress; inline mode only.
  void help_once(std::unique_lock<std::mutex>& lock);
  void notify_progress_locked() noexcept;
  // scheduler_admission.cpp
  Status admit_locked(PreparedGraph& graph, std::span<Submission* const> producers,
                      Submission*& out_slot);
  static bool conflicts(const PreparedGraph& a, const PreparedGraph& b) noexcept;
  // scheduler_completion.cpp
  void fail_locked(Submission& submission, std::uint32_t region, Status status) noexcept;
  bool can_finish(const Submission& submission) const noexcept;
  void finish_locked(Submission& submission) noexcept;
  void sweep_locked() noexcept;

  devices::DeviceRegistry& devices_;
  StatCounters& engine_stats_;
  const bool inline_mode_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable host_cv_;
  Submission* pending_head_ = nullptr;
  Submission* pending_tail_ = nullptr;
  std::size_t pending_count_ = 0;
  std::size_t idle_workers_ = 0;
  std::size_t lease_waiters_ = 0;
  bool shutdown_ = false;
  // Bumped on every region or submission end; inline-mode helpers sleep on it.
  std::atomic<std::uint32_t> progress_{0};
  std::atomic<std::uint32_t> progress_waiters_{0};
  // Graphs whose completion became uncertain: kept, with everything they retain,
  // until the scheduler is destroyed (engine item 10).
  std::vector<Ref<PreparedGraph>> quarantine_;
  std::vector<std::thread> workers_;
};

}  // namespace accord::engine
