// The watchdog and device loss (ARCHITECTURE.md, "Completion from device threads" and
// "Device loss"). A region that never reports (a hung fence, a stuck driver) is failed
// with Execution after SchedulerOptions::watchdog_timeout and its device marked lost;
// a lost device fails what was queued on it with DeviceLost as workers reach it, and
// nothing on other devices notices. Both visit the sessions one at a time, each under
// its own lock, through the session list kept here: never one lock over every
// pending submission.
#include <algorithm>
#include <string>

#include "client/api/futex.h"
#include "daemon/engine/scheduler.h"
#include "client/api/thread_name.h"

namespace accord::engine {

void Scheduler::add_session(SessionSchedule& q) noexcept {
  std::lock_guard lock(sessions_mu_);
  q.prev_session = nullptr;
  q.next_session = sessions_head_;
  if (sessions_head_ != nullptr) sessions_head_->prev_session = &q;
  sessions_head_ = &q;
}

void Scheduler::remove_session(SessionSchedule& q) noexcept {
  std::lock_guard lock(sessions_mu_);
  if (q.prev_session != nullptr) q.prev_session->next_session = q.next_session;
  else sessions_head_ = q.next_session;
  if (q.next_session != nullptr) q.next_session->prev_session = q.prev_session;
  q.prev_session = q.next_session = nullptr;
}

std::vector<Ref<Session>> Scheduler::live_sessions() {
  std::vector<Ref<Session>> sessions;
  std::lock_guard lock(sessions_mu_);
  for (SessionSchedule* q = sessions_head_; q != nullptr; q = q->next_session)
    if (q->owner.try_retain()) sessions.push_back(Ref<Session>::adopt(&q->owner));  // else: being destroyed
  return sessions;
}

void Scheduler::on_device_lost(devices::DeviceIndex device, const Status& cause) noexcept {
  // Retained, so the references are dropped after every lock is released (the last one
  // leaves the session list).
  std::vector<Ref<Session>> sessions = live_sessions();
  for (const Ref<Session>& session : sessions) {
    SessionSchedule& q = session->schedule;
    LeaseWaiter* refused = nullptr;
    {
      std::lock_guard lock(q.mu);
      // Leases waiting on the lost device's memory are refused now, not when its work ends.
      if (q.lease_queue_head != nullptr) settle_lease_waiters_locked(q, refused);
      // Blocked acquire_lease calls look again and find the device lost.
      if (q.lease_sleepers > 0) q.host_cv.notify_all();
    }
    tell_lease_waiters(refused);
  }
  // Queued regions touching the device fail when a worker or helper picks them
  // (execute() checks device state before launching); wake them all to do it now.
  notify_progress();
  ready_.wake_all();
  if (options_.on_device_lost) options_.on_device_lost(device, cause);
}

void Scheduler::on_device_recovered(devices::DeviceIndex device, const std::string& how) noexcept {
  // Nothing queued waits for a recovery: work of the old generation already failed, and
  // new work is checked against the new generation when it is submitted.
  if (options_.on_device_recovered) options_.on_device_recovered(device, how);
}

void Scheduler::watchdog_loop() {
  name_this_thread("engine-watch");
  // Checking a few times per timeout is precise enough and keeps an idle daemon idle.
  const auto period = std::clamp<std::chrono::milliseconds>(options_.watchdog_timeout / 8,
                                                           std::chrono::milliseconds(5), std::chrono::seconds(1));
  std::unique_lock watchdog_lock(watchdog_mu_);
  while (!watchdog_stop_) {
    watchdog_cv_.wait_for(watchdog_lock, period);
    if (watchdog_stop_) break;
    watchdog_lock.unlock();
    // A first pass only counts, session by session, and allocates nothing.
    LostDevices lost;
    std::size_t late = 0;
    {
      std::lock_guard list_lock(sessions_mu_);
      for (SessionSchedule* q = sessions_head_; q != nullptr; q = q->next_session) {
        std::lock_guard lock(q->mu);
        late += expire_locked(*q, Clock::now(), lost, false);
      }
    }
    if (late != 0) {
      // The device is marked lost before the region's failure is published, so whoever
      // sees the Execution outcome also sees the device lost. Marking it calls back into
      // on_device_lost(), so it happens outside every lock; then the sessions are
      // visited again.
      for (std::size_t i = 0; i < lost.count; ++i)
        devices_.mark_lost(lost.devices[i], execution_error("a region on it did not complete within " +
                                                            std::to_string(options_.watchdog_timeout.count()) + " ms"));
      std::size_t expired = 0;
      std::vector<Ref<Session>> sessions = live_sessions();
      for (const Ref<Session>& session : sessions) {
        SessionSchedule& q = session->schedule;
        Deferred deferred;
        std::unique_lock lock(q.mu);
        const std::size_t n = expire_locked(q, Clock::now(), lost, true);
        if (n == 0) continue;
        expired += n;
        settle(q, lock, deferred);  // the retained session outlives it
      }
      if (expired != 0) {
        notify_progress();
        ready_.wake_all();
        // The abandoned regions no longer count as in flight: shutdown need not wait
        // for a report that may never come.
        const bool draining = draining_.load();
        if (inflight_.fetch_sub(static_cast<std::uint32_t>(expired)) == expired && draining)
          futex_wake_all(inflight_);
      }
    }
    watchdog_lock.lock();
  }
}

std::size_t Scheduler::expire_locked(SessionSchedule& q, Clock::time_point now, LostDevices& lost, bool apply) {
  std::size_t expired = 0;
  for (Submission* s = q.pending_head; s != nullptr; s = s->next) {
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
      q.lane_busy[region.lane_slot] = 0;
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
