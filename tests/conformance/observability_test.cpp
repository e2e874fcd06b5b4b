// Observability (ARCHITECTURE.md engine item 12, seed 2.18-2.19): cumulative statistics
// counters move exactly as the work implies, and a bounded host-observed trace records
// one event per executed region with its lane, drops the oldest beyond capacity, and
// exports Chrome/Perfetto JSON labelled as host-observed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("allocation counters and live and peak bytes follow allocations", "[conformance][statistics]") {
  CONFORMANCE_RUNTIME(rt);
  const Statistics s0 = rt.statistics();
  std::optional<Buffer> a = make_buffer(rt, 100);
  const Buffer b = make_buffer(rt, 200);
  std::optional<Buffer> c = make_buffer(rt, 300);
  const Statistics s1 = rt.statistics();
  CHECK(s1.allocations - s0.allocations == 3);
  CHECK(s1.live_bytes - s0.live_bytes == 600);
  CHECK(s1.peak_bytes >= s1.live_bytes);
  CHECK(s1.imports == s0.imports);  // host-visible buffers are not shared imports

  const Buffer alias = *c;
  c.reset();
  CHECK(rt.statistics().live_bytes == s1.live_bytes);  // an alias keeps it
  a.reset();
  CHECK(eventually([&] { return rt.statistics().live_bytes == s1.live_bytes - 100; }));
  const Statistics s2 = rt.statistics();
  CHECK(s2.peak_bytes >= s1.live_bytes);  // the peak does not come down
  CHECK(s2.allocations == s1.allocations);  // cumulative
}

TEST_CASE("submission and completion counters count accepted and finished submissions",
          "[conformance][statistics]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.graph_slots = 4;
  CONFORMANCE_RUNTIME(rt, options);
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view(), 100'000);  // runs serially: 3 x 100 ms
  const Statistics s0 = rt.statistics();
  std::vector<Completion> pending;
  for (int i = 0; i < 3; ++i) pending.push_back(UNWRAP(exec.submit()));
  const Statistics s1 = rt.statistics();
  CHECK(s1.submissions - s0.submissions == 3);
  CHECK(s1.completions == s0.completions);  // the first is still sleeping
  for (const Completion& c : pending) REQUIRE_OK(c.wait());
  CHECK(eventually([&] { return rt.statistics().completions - s0.completions == 3; }));

  // Cancelled and failed submissions are terminal too.
  const Kernel fail = load_fail(rt);
  const Buffer victim = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(fail, {victim.view()}));
  const ExecutableGraph failing = prepare(std::move(g));
  const Completion failed = UNWRAP(failing.submit());
  CHECK_STATUS(failed.wait(), FailsWith(ErrorKind::Execution));
  const Completion cancelled = UNWRAP(exec.submit());
  cancelled.cancel();
  CHECK_STATUS(cancelled.wait(), FailsWith(ErrorKind::Cancelled));
  CHECK(eventually([&] { return rt.statistics().completions - s0.completions == 5; }));
  CHECK(rt.statistics().submissions - s0.submissions == 5);
}

TEST_CASE("copy byte counters count executed copies per lane", "[conformance][statistics]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer src = make_buffer(rt, 64);
  const Buffer d1 = make_buffer(rt, 64);
  const Buffer d2 = make_buffer(rt, 32);
  const Buffer d3 = make_buffer(rt, 16);
  const Buffer d4 = make_buffer(rt, 8);
  Graph g = rt.graph();
  REQUIRE_OK(g.fill(src.view(), 3));  // a fill is not a copy
  REQUIRE_OK(g.copy(d1.view(), src.view()));                                  // Compute, 64
  REQUIRE_OK(g.copy_on(d2.view(), slice_of(src, 0, 32), GpuLane::Upload));     // 32
  REQUIRE_OK(g.copy_on(d3.view(), slice_of(src, 0, 16), GpuLane::Download));   // 16
  REQUIRE_OK(g.copy_on(d4.view(), slice_of(src, 0, 8), GpuLane::Compute));     // 8
  const ExecutableGraph exec = prepare(std::move(g));
  const Statistics s0 = rt.statistics();
  CHECK(s0.copied_bytes == 0);  // prepare copies nothing

  run_once(exec);
  const Statistics s1 = rt.statistics();
  CHECK(s1.copied_bytes - s0.copied_bytes == 120);
  CHECK(s1.device_copied_bytes - s0.device_copied_bytes == 72);
  CHECK(s1.uploaded_bytes - s0.uploaded_bytes == 32);
  CHECK(s1.downloaded_bytes - s0.downloaded_bytes == 16);

  run_once(exec);
  const Statistics s2 = rt.statistics();
  CHECK(s2.copied_bytes - s0.copied_bytes == 240);
  CHECK(s2.uploaded_bytes - s0.uploaded_bytes == 64);
  CHECK(s2.allocations == s0.allocations);  // replay allocates nothing tracked
  CHECK(s2.live_bytes == s0.live_bytes);
}

TEST_CASE("a trace records one event per executed region with its lane", "[conformance][trace]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel scale = load_scale(rt, 4, 2.0f);
  const Buffer a = make_buffer(rt, 16);
  const Buffer b = make_buffer(rt, 16);
  const Buffer c = make_buffer(rt, 16);
  const Buffer d = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.fill(a.view(), 0));                               // region 0: Compute
  REQUIRE_OK(g.copy_on(b.view(), a.view(), GpuLane::Upload));    // region 1: Upload, 16 bytes
  REQUIRE_OK(g.host(scale, {b.view(), c.view()}));               // region 2: Host
  REQUIRE_OK(g.copy_on(d.view(), c.view(), GpuLane::Download));  // region 3: Download, 16 bytes
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 4);

  CHECK_FALSE(rt.finish_trace().has_value());  // not tracing yet
  REQUIRE_OK(rt.start_trace(64));
  run_once(exec);
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  CHECK(trace->dropped == 0);
  REQUIRE(trace->events.size() == 4);
  std::multiset<LaneKind> lanes;
  std::uint64_t copied = 0;
  for (const TraceEvent& e : trace->events) {
    lanes.insert(e.lane);
    copied += e.copied_bytes;
    CHECK_FALSE(e.failed);
    CHECK(e.start_us >= 0.0);
    CHECK(e.duration_us >= 0.0);
  }
  CHECK(lanes == std::multiset<LaneKind>{LaneKind::Upload, LaneKind::Compute, LaneKind::Download, LaneKind::Host});
  CHECK(copied == 32);
  for (const TraceEvent& e : trace->events) {
    if (e.lane == LaneKind::Upload || e.lane == LaneKind::Download) CHECK(e.copied_bytes == 16);
    if (e.lane == LaneKind::Host || e.lane == LaneKind::Compute) CHECK(e.copied_bytes == 0);
  }
  // The regions ran in dependency order: each starts no earlier than its predecessor.
  auto start_of = [&](LaneKind lane) {
    return std::find_if(trace->events.begin(), trace->events.end(),
                        [&](const TraceEvent& e) { return e.lane == lane; })->start_us;
  };
  CHECK(start_of(LaneKind::Upload) >= start_of(LaneKind::Compute));
  CHECK(start_of(LaneKind::Host) >= start_of(LaneKind::Upload));
  CHECK(start_of(LaneKind::Download) >= start_of(LaneKind::Host));

  // Work after finish_trace is not recorded anywhere.
  run_once(exec);
  CHECK_FALSE(rt.finish_trace().has_value());
}

TEST_CASE("a full trace drops its oldest events and counts them", "[conformance][trace]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer src = make_buffer(rt, 64);
  const Buffer dst = make_buffer(rt, 64);
  std::vector<ExecutableGraph> graphs;  // one Compute copy each, of 8, 16, ... 40 bytes
  for (std::size_t k = 1; k <= 5; ++k) graphs.push_back(copy_graph(rt, slice_of(dst, 0, 8 * k), slice_of(src, 0, 8 * k)));
  REQUIRE_OK(rt.start_trace(2));
  for (const ExecutableGraph& g : graphs) run_once(g);  // sequential: one event each
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  CHECK(trace->dropped == 3);
  REQUIRE(trace->events.size() == 2);
  CHECK(trace->events[0].copied_bytes == 32);  // the two newest survive, in completion order
  CHECK(trace->events[1].copied_bytes == 40);
  CHECK(trace->events[1].start_us >= trace->events[0].start_us);
}

TEST_CASE("start_trace refuses a zero capacity and a second trace", "[conformance][trace]") {
  CONFORMANCE_RUNTIME(rt);
  CHECK_STATUS(rt.start_trace(0), FailsWith(ErrorKind::Invalid));
  CHECK_FALSE(rt.finish_trace().has_value());  // the refused start started nothing
  REQUIRE_OK(rt.start_trace(8));
  CHECK_STATUS(rt.start_trace(8), FailsWith(ErrorKind::Busy));
  CHECK(rt.finish_trace().has_value());
  CHECK_FALSE(rt.finish_trace().has_value());
  CHECK_OK(rt.start_trace(4));  // after finishing, a new trace may start
  CHECK(rt.finish_trace().has_value());
}

TEST_CASE("a trace exports Chrome trace JSON labelled host-observed", "[conformance][trace]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 32);
  const Buffer b = make_buffer(rt, 32);
  Graph g = rt.graph();
  REQUIRE_OK(g.fill(a.view(), 1));
  REQUIRE_OK(g.copy_on(b.view(), a.view(), GpuLane::Download));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE_OK(rt.start_trace(16));
  run_once(exec);
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  REQUIRE(trace->events.size() == 2);

  const std::string text = trace->to_json();
  CHECK_THAT(text, Catch::Matchers::Contains("host-observed"));
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(doc.is_discarded());
  REQUIRE(doc.contains("traceEvents"));
  REQUIRE(doc["traceEvents"].is_array());
  std::size_t complete_events = 0;
  std::set<int> tids;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    ++complete_events;
    tids.insert(e.value("tid", -1));
    CHECK(e.contains("ts"));
    CHECK(e.contains("dur"));
  }
  CHECK(complete_events == 2);
  CHECK(tids == std::set<int>{static_cast<int>(LaneKind::Compute), static_cast<int>(LaneKind::Download)});
}
