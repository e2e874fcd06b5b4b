// The forecast is one word and the sleep is a timer: nothing here allocates or takes a
// lock, since both sit on the wait of every submission.
#include "client/api/wait_forecast.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

namespace accord {

void WaitForecast::record(std::int64_t run_ns) noexcept {
  if (run_ns <= 0) return;
  const std::int64_t floor = floor_ns_.load(std::memory_order_relaxed);
  // The rise is also held to an eighth of the forecast: one run preempted for a
  // millisecond would otherwise lift a 7 us forecast to 40 us, and the waiters after it
  // would sleep past their runs' ends until oversleeping brought it down again.
  const std::int64_t next =
      floor == 0 || run_ns < floor ? run_ns : floor + std::min((run_ns - floor) / 32, floor / 8);
  floor_ns_.store(next, std::memory_order_relaxed);
}

void WaitForecast::overslept() noexcept {
  const std::int64_t floor = floor_ns_.load(std::memory_order_relaxed);
  floor_ns_.store(floor - floor / 4, std::memory_order_relaxed);
}

std::int64_t WaitForecast::sleep_ns(std::int64_t elapsed_ns) const noexcept {
  const std::int64_t floor = floor_ns_.load(std::memory_order_relaxed);
  if (floor == 0) return 0;
  const std::int64_t sleep = floor - std::max(kLeadNs, floor / 4) - elapsed_ns;
  return sleep >= kMinSleepNs ? sleep : 0;
}

namespace {
std::atomic<std::uint64_t> g_sleeps{0};
}  // namespace

std::uint64_t forecast_sleeps() noexcept { return g_sleeps.load(std::memory_order_relaxed); }

void sleep_precisely(std::int64_t ns) noexcept {
  if (ns <= 0) return;
  g_sleeps.fetch_add(1, std::memory_order_relaxed);
  const int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (slack > 1000) static_cast<void>(prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0));
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += ns / 1'000'000'000;
  until.tv_nsec += ns % 1'000'000'000;
  if (until.tv_nsec >= 1'000'000'000) {
    ++until.tv_sec;
    until.tv_nsec -= 1'000'000'000;
  }
  // EINTR: a signal handler ran; sleep on to the same end.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
  }
  if (slack > 1000) static_cast<void>(prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack), 0, 0, 0));
}

}  // namespace accord
