// Daemon transport only: RuntimeOptions::forecast_sleep on accordd's submission ring.
// Once a graph has run, a wait on its next runs sleeps through most of what it took
// (accordd's own measure of the run), then watches the ring; with ForecastSleep::Never no
// wait sleeps. Either way every run completes with its result. (Embedded, the sleep
// applies only to devices that complete by polling: unit_executor's [forecast] cases.)
#include <catch2/catch.hpp>

#include <cstdint>

#include "client/api/wait_forecast.h"
#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("over accordd's ring, waits after a graph's first run sleep through its forecast, and none with Never",
          "[conformance][daemon][forecast]") {
  const ForecastSleep mode = GENERATE(ForecastSleep::ThroughDaemon, ForecastSleep::Never);
  CAPTURE(static_cast<int>(mode));
  RuntimeOptions options;
  options.forecast_sleep = mode;
  CONFORMANCE_RUNTIME(rt, options);
  REQUIRE(rt.options().submission_ring);
  const Buffer marker = make_buffer(rt, 64);
  // 2 ms on the host lane: the forecast leaves a sleep of about 1.5 ms, far above the
  // 10 us below which no wait sleeps.
  const ExecutableGraph exec = sleep_graph(rt, marker.view(), 2'000);
  constexpr int kRuns = 8;
  const std::uint64_t before = forecast_sleeps();
  for (int i = 0; i < kRuns; ++i) {
    fill_on_host(marker, 0);
    run_once(exec);
    CHECK(u32_at(read_bytes(marker), 0) == kSleepMarker);
  }
  const std::uint64_t sleeps = forecast_sleeps() - before;
  if (mode == ForecastSleep::Never) {
    CHECK(sleeps == 0);
  } else {
    // The first run has no forecast; the other seven sleep unless a wait began more than
    // 1.5 ms after its submit.
    CHECK(sleeps >= 4);
    CHECK(sleeps <= kRuns - 1);
  }
}
