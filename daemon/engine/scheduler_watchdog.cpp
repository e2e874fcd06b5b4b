// The watchdog and device loss (ARCHITECTURE.md, "Completion from device threads" and
// "Device loss"). A region that never reports (a hung fence, a stuck driver) is failed
// with Execution after SchedulerOptions::watchdog_timeout and its device marked lost;
// a lost device fails what was queued on it with DeviceLost as workers reach it, and
// nothing on other devices notices.
#include <algorithm>
#include <string>

#include "client/api/futex.h"
#include "daemon/engine/scheduler.h"

namespace accord::engine {

void Scheduler::on_device_lost(devices::DeviceIndex device, const Status& cause) noexcept {
  LeaseWaiter* refused = nullptr;
  {
    std::lock_guard lock(mu_);
    // Queued regions touching the device fail when a worker or helper picks them
    // (execute() checks device state before launching); wake them all to do it now.
    notify_progress_locked();
    // Leases waiting on the lost device's memory are refused now, not when its work ends.
    if (lease_queue_head_ != nullptr) settle_lease_waiters_locked(refused);
  }
  tell_lease_waiters(refused);
  work_cv_.notify_all();
  host_cv_.notify_all();
  if (options_.on_device_lost) options_.on_device_lost(device, cause);
}

void Scheduler::on_device_recovered(devices::DeviceIndex device, const std::string& how) noexcept {
  // Nothing queued waits for a recovery: work of the old generation already failed, and
  // new work is checked against the new generation when it is submitted.
  if (options_.on_device_recovered) options_.on_device_recovered(device, how);
}

void Scheduler::watchdog_loop() {
  // Checking a few times per timeout is precise enough and keeps an idle daemon idle.
  const auto period = std::clamp<std::chrono::milliseconds>(options_.watchdog_timeout / 8,
                                                           std::chrono::milliseconds(5), std::chrono::seconds(1));
  std::unique_lock lock(mu_);
  while (!watchdog_stop_) {
    watchdog_cv_.wait_for(lock, period);
    if (watchdog_stop_) break;
    // The device is marked lost before the region's failure is published, so whoever
    // sees the Execution outcome also sees the device lost. Marking it calls back into
    // on_device_lost(), so it happens outside the lock; then the scan runs again.
    LostDevices lost;
    if (expire_locked(Clock::now(), lost, false) == 0) continue;
    lock.unlock();
    for (std::size_t i = 0; i < lost.count; ++i)
      devices_.mark_lost(lost.devices[i], execution_error("a region on it did not complete within " +
                                                          std::to_string(options_.watchdog_timeout.count()) + " ms"));
    lock.lock();
    Deferred deferred;
    const std::size_t expired = expire_locked(Clock::now(), lost, true);
    if (expired == 0) continue;
    settle(lock, deferred);
    work_cv_.notify_all();
    // The abandoned regions no longer count as in flight: shutdown need not wait for
    // a report that may never come.
    const bool draining = draining_.load();
    if (inflight_.fetch_sub(static_cast<std::uint32_t>(expired)) == expired && draining) futex_wake_all(inflight_);
    lock.lock();
  }
}

std::size_t Scheduler::expire_locked(Clock::time_point now, LostDevices& lost, bool apply) {
  std::size_t expired = 0;
  for (Submission* s = pending_head_; s != nullptr; s = s->next) {
    for (std::uint32_t r = 0; r < s->region_count; ++r) {
      RegionRun& run = s->runs[r];
      if (run.state != RegionState::Running || run.abandoned || now - run.started < options_.watchdog_timeout)
        continue;
      ++expired;
      PreparedGraph& graph = s->graph();
      lost.add(graph.regions()[r].device);
      if (!apply) continue;
      const PreparedRegion& region = graph.regions()[r];
      run.abandoned = true;
      run.state = RegionState::Done;
      graph.session().lane_busy[region.lane_slot] = 0;
      --s->running;
      --s->remaining;
      // A launch that never returned would keep the submission open forever.
      if (region.native_waits && !run.launched && s->launching > 0) --s->launching;
      const std::string& device = devices_.at(region.device).info().name;
      fail_locked(*s, r,
                  execution_error("region " + std::to_string(r) + " on device " + device + " did not complete within " +
                                  std::to_string(options_.watchdog_timeout.count()) + " ms (watchdog)"));
    }
  }
  return expired;
}

}  // namespace accord::engine
