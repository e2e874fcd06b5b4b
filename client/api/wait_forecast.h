// WaitForecast: how long a piece of work that is submitted again and again (a prepared
// graph) usually takes, so that a thread waiting for it can sleep through most of that
// time instead of spinning on a core for all of it, and spin only near the end. With
// sixteen tenants spinning through 40 us GPU graphs on sixteen CPUs, the threads that
// launch and complete their work (accordd's, or the driver's lock holder) wait for a
// core behind them; a waiter asleep until just before its work ends gives its core back
// without asking anyone to wake it.
// Thread-safety: every member is thread-safe (atomic words; a lost update only delays
// how fast the forecast follows the work).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace accord {

class WaitForecast {
 public:
  // Sleeping is worth it only when this much of it is left: shorter sleeps cost more in
  // timer and wake-up latency than the spin they save.
  static constexpr std::int64_t kMinSleepNs = 10'000;
  // Wakes this long before the forecast end (or a quarter of it, if that is more): a
  // timer's wake-up on a busy virtual machine takes a few microseconds, sometimes more.
  static constexpr std::int64_t kLeadNs = 10'000;
  static constexpr std::uint32_t kMeasuredFirst = 16;
  static constexpr std::uint32_t kMeasureEvery = 16;

  // Records how long one run took, measured where the waiter's own sleep cannot lengthen
  // it: accordd's own elapsed time, or a run whose end the waiter watched (a run finished
  // late by another thread while its waiter slept would feed the sleep back). The forecast
  // is a low estimate: it drops to any shorter run at once and rises a 32nd of the way
  // towards a longer one, by at most an eighth of itself, so that a sleep rarely
  // outlasts the work.
  void record(std::int64_t run_ns) noexcept;
  // Whether the next wait should watch the whole run and record it rather than sleep: a
  // waiter that slept cannot tell how much its sleep delayed the run (when the waiting
  // thread is the one that notices the device's end, it delays it by the sleep), so the
  // first kMeasuredFirst waits of a graph and one in every kMeasureEvery after it
  // measure. Counts the wait.
  bool next_wait_measures() noexcept {
    const std::uint32_t n = waits_.fetch_add(1, std::memory_order_relaxed);
    return n < kMeasuredFirst || n % kMeasureEvery == 0;
  }
  // A waiter slept through the whole run (it had ended when the waiter woke): the
  // forecast drops by a quarter, since the run's true length is unknown but shorter.
  void overslept() noexcept;
  // How long a waiter whose run began `elapsed_ns` ago should sleep now: 0 when the
  // forecast is unknown, or what would be left of the sleep is under kMinSleepNs.
  std::int64_t sleep_ns(std::int64_t elapsed_ns) const noexcept;
  std::int64_t forecast_ns() const noexcept { return floor_ns_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> floor_ns_{0};
  std::atomic<std::uint32_t> waits_{0};
};

// The steady clock in nanoseconds, as forecasts and their callers measure runs.
inline std::int64_t steady_clock_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Sleeps `ns` on the monotonic clock with this thread's timer slack at 1 us for the
// sleep (Linux's default of 50 us would end a 30 us sleep up to 50 us late), then puts
// the thread's own slack back, and counts the sleep in forecast_sleeps().
void sleep_precisely(std::int64_t ns) noexcept;
// How many sleeps sleep_precisely() took in this process, for benchmarks and tests.
std::uint64_t forecast_sleeps() noexcept;

}  // namespace accord
