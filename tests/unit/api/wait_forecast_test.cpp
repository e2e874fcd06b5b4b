// WaitForecast and sleep_precisely (client/api/wait_forecast.h): the forecast is a low
// estimate that falls at once and rises slowly, a sleep is offered only when enough of
// it is left, and a precise sleep lasts at least what was asked and leaves the thread's
// timer slack as it found it.
#include <catch2/catch.hpp>

#include <sys/prctl.h>

#include <chrono>
#include <cstdint>

#include "client/api/wait_forecast.h"

namespace accord {
namespace {

constexpr std::int64_t kUs = 1000;

TEST_CASE("a forecast offers no sleep before any run was recorded", "[wait-forecast]") {
  const WaitForecast forecast;
  CHECK(forecast.forecast_ns() == 0);
  CHECK(forecast.sleep_ns(0) == 0);
}

TEST_CASE("a forecast falls at once to a shorter run and rises a 32nd of the way to a longer one, an eighth at most",
          "[wait-forecast]") {
  WaitForecast forecast;
  forecast.record(100 * kUs);
  CHECK(forecast.forecast_ns() == 100 * kUs);
  forecast.record(40 * kUs);
  CHECK(forecast.forecast_ns() == 40 * kUs);
  forecast.record(72 * kUs);
  CHECK(forecast.forecast_ns() == 41 * kUs);
  // An outlier (a run preempted for a millisecond) lifts it by an eighth at most.
  forecast.record(1'041 * kUs);
  CHECK(forecast.forecast_ns() == 41 * kUs + 41 * kUs / 8);
  forecast.record(41 * kUs);
  CHECK(forecast.forecast_ns() == 41 * kUs);
  forecast.record(0);   // no duration: ignored
  forecast.record(-5);  // a clock that went backwards: ignored
  CHECK(forecast.forecast_ns() == 41 * kUs);
}

TEST_CASE("a waiter that slept past the end lowers the forecast by a quarter until it stops sleeping",
          "[wait-forecast]") {
  WaitForecast forecast;
  forecast.overslept();  // nothing known yet: stays unknown
  CHECK(forecast.forecast_ns() == 0);
  forecast.record(80 * kUs);
  forecast.overslept();
  CHECK(forecast.forecast_ns() == 60 * kUs);
  forecast.overslept();
  CHECK(forecast.forecast_ns() == 45 * kUs);
  int oversleeps = 2;
  while (forecast.sleep_ns(0) > 0) {
    forecast.overslept();
    ++oversleeps;
  }
  // A forecast under 20 us offers no sleep, so a waiter watches the next run end and
  // measures it again.
  CHECK(forecast.forecast_ns() < 20 * kUs);
  CHECK(oversleeps <= 6);
}

TEST_CASE("a graph's first 16 waits measure its runs, then one wait in 16", "[wait-forecast]") {
  WaitForecast forecast;
  for (int i = 0; i < 16; ++i) CHECK(forecast.next_wait_measures());
  int measured = 0;
  for (int i = 0; i < 160; ++i) measured += forecast.next_wait_measures() ? 1 : 0;
  CHECK(measured == 10);
  CHECK(forecast.next_wait_measures());        // the 177th wait (n = 176 = 11 x 16)
  CHECK_FALSE(forecast.next_wait_measures());  // the 178th: between two measured waits
}

TEST_CASE("a sleep ends a lead before the forecast and is offered only when 10 us of it are left",
          "[wait-forecast]") {
  WaitForecast forecast;
  forecast.record(40 * kUs);
  // The lead is 10 us, or a quarter of the forecast when that is more.
  CHECK(forecast.sleep_ns(0) == 30 * kUs);
  CHECK(forecast.sleep_ns(5 * kUs) == 25 * kUs);
  CHECK(forecast.sleep_ns(20 * kUs) == 10 * kUs);
  CHECK(forecast.sleep_ns(21 * kUs) == 0);
  CHECK(forecast.sleep_ns(60 * kUs) == 0);  // already late

  WaitForecast long_runs;
  long_runs.record(200 * kUs);
  CHECK(long_runs.sleep_ns(0) == 150 * kUs);

  WaitForecast short_runs;  // a graph of a few small kernels: never slept through
  short_runs.record(19 * kUs);
  CHECK(short_runs.sleep_ns(0) == 0);
}

TEST_CASE("a precise sleep lasts at least what was asked, is counted, and keeps the thread's timer slack",
          "[wait-forecast]") {
  REQUIRE(prctl(PR_SET_TIMERSLACK, 50'000UL, 0, 0, 0) == 0);
  const std::uint64_t sleeps_before = forecast_sleeps();
  const auto begin = std::chrono::steady_clock::now();
  sleep_precisely(300 * kUs);
  const auto slept = std::chrono::steady_clock::now() - begin;
  CHECK(slept >= std::chrono::microseconds(300));
  CHECK(forecast_sleeps() == sleeps_before + 1);
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == 50'000);

  sleep_precisely(0);  // nothing to sleep: not counted
  CHECK(forecast_sleeps() == sleeps_before + 1);
}

}  // namespace
}  // namespace accord
