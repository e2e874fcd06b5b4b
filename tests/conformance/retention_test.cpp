// Retention (ARCHITECTURE.md engine item 9): a graph owns its views and kernels, a
// pending submission owns its graph, so dropping buffers, builders, prepared graphs,
// completions or the Runtime handle never frees memory in-flight work touches. Observed
// through statistics().live_bytes and through results that are still correct.
#include <catch2/catch.hpp>

#include <optional>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

namespace {
constexpr std::size_t kBig = 1 << 16;  // large enough to stand out in live_bytes
}

TEST_CASE("dropping every handle while work is in flight keeps its memory until it completes",
          "[conformance][retention]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const std::uint64_t baseline = rt.statistics().live_bytes;
  const std::uint64_t completions_before = rt.statistics().completions;

  std::optional<Buffer> source = make_buffer(rt, kBig);
  const Buffer result = make_buffer(rt, 16);  // the one handle the test keeps
  fill_on_host(*source, 0x3D);
  CHECK(rt.statistics().live_bytes == baseline + kBig + 16);
  {
    const Kernel sleeper = load_sleep(rt, kLongSleepUs);
    Graph g = rt.graph();
    REQUIRE_OK(g.host(sleeper, {slice_of(*source, 0, 16)}));  // marker, after sleeping
    REQUIRE_OK(g.copy(result.view(), slice_of(*source, 0, 16)));
    const ExecutableGraph exec = prepare(std::move(g));
    const Completion dropped = UNWRAP(exec.submit());
  }  // kernel, builder, prepared graph and completion dropped
  source.reset();  // and the source buffer

  // The submission is still pending (a 300 ms sleep), so its buffer is still live.
  const Statistics during = rt.statistics();
  CHECK(during.completions == completions_before);
  CHECK(during.live_bytes == baseline + kBig + 16);

  // Results are still correct: the blocking map waits for the pending writer of result.
  const auto bytes = read_bytes(result);
  CHECK(u32_at(bytes, 0) == kSleepMarker);
  CHECK(subrange(bytes, 4, 16) == repeated(12, 0x3D));

  // Once the work is done, the dropped buffer is released (a worker may trail a little).
  CHECK(eventually([&] { return rt.statistics().live_bytes == baseline + 16; }));
  CHECK(rt.statistics().completions == completions_before + 1);
}

TEST_CASE("a graph builder keeps the buffers it recorded alive", "[conformance][retention]") {
  CONFORMANCE_RUNTIME(rt);
  const std::uint64_t baseline = rt.statistics().live_bytes;
  std::optional<Graph> g = rt.graph();
  {
    const Buffer b = make_buffer(rt, kBig);
    REQUIRE_OK(g->fill(b.view(), 1));
  }
  CHECK(rt.statistics().live_bytes == baseline + kBig);
  g.reset();
  CHECK(eventually([&] { return rt.statistics().live_bytes == baseline; }));
}

TEST_CASE("a prepared graph keeps its buffers and kernels alive and still runs", "[conformance][retention]") {
  CONFORMANCE_RUNTIME(rt);
  const std::uint64_t baseline = rt.statistics().live_bytes;
  constexpr std::uint32_t kCount = 4;
  const Buffer out = make_buffer(rt, kCount * 4);
  std::optional<ExecutableGraph> exec;
  {
    const Buffer in = make_buffer(rt, kBig);
    write_floats(in, std::vector<float>(kBig / 4, 2.5f));
    const Kernel scale = load_scale(rt, kCount, 4.0f);
    Graph g = rt.graph();
    REQUIRE_OK(g.host(scale, {slice_of(in, 0, kCount * 4), out.view()}));
    exec = prepare(std::move(g));
  }  // the input buffer, the kernel handle and the builder are gone
  CHECK(rt.statistics().live_bytes == baseline + kBig + kCount * 4);
  run_once(*exec);
  CHECK(read_floats(out) == std::vector<float>(kCount, 10.0f));
  run_once(*exec);  // and again: nothing was released by the first run
  CHECK(read_floats(out) == std::vector<float>(kCount, 10.0f));
  exec.reset();
  CHECK(eventually([&] { return rt.statistics().live_bytes == baseline + kCount * 4; }));
}

TEST_CASE("copies of a prepared graph share it; the last one releases it", "[conformance][retention]") {
  CONFORMANCE_RUNTIME(rt);
  const std::uint64_t baseline = rt.statistics().live_bytes;
  std::optional<ExecutableGraph> first;
  {
    const Buffer b = make_buffer(rt, kBig);
    first = fill_graph(rt, b.view(), 2);
  }
  std::optional<ExecutableGraph> second = *first;
  first.reset();
  CHECK(rt.statistics().live_bytes == baseline + kBig);
  run_once(*second);
  second.reset();
  CHECK(eventually([&] { return rt.statistics().live_bytes == baseline; }));
}

TEST_CASE("buffers, kernels and graphs keep their Runtime alive", "[conformance][retention]") {
  std::optional<Buffer> out;
  std::optional<ExecutableGraph> exec;
  std::optional<Completion> pending;
  {
    CONFORMANCE_RUNTIME(rt);
    out = make_buffer(rt, 16);
    const Buffer src = make_buffer(rt, 16);
    fill_on_host(src, 0x4E);
    const Kernel sleeper = load_sleep(rt, 100'000);
    Graph g = rt.graph();
    REQUIRE_OK(g.host(sleeper, {src.view()}));
    REQUIRE_OK(g.copy(out->view(), src.view()));
    exec = prepare(std::move(g));
    pending = UNWRAP(exec->submit());
  }  // the Runtime handle is gone; the work is pending
  REQUIRE_OK(pending->wait());
  const auto bytes = read_bytes(*out);
  CHECK(u32_at(bytes, 0) == kSleepMarker);
  CHECK(subrange(bytes, 4, 16) == repeated(12, 0x4E));
  run_once(*exec);  // the prepared graph still works without a Runtime handle
  pending.reset();
  exec.reset();
  out.reset();  // the last handle: the runtime shuts down here, without hanging
}

TEST_CASE("live bytes return to their earlier value after work completes and handles drop",
          "[conformance][retention]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const std::uint64_t baseline = rt.statistics().live_bytes;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const Buffer a = make_buffer(rt, kBig);
    const Buffer b = make_buffer(rt, kBig);
    Graph g = rt.graph();
    REQUIRE_OK(g.fill(a.view(), 1));
    REQUIRE_OK(g.copy(b.view(), a.view()));
    const ExecutableGraph exec = prepare(std::move(g));
    run_once(exec);
    CHECK(rt.statistics().live_bytes == baseline + 2 * kBig);
  }
  CHECK(eventually([&] { return rt.statistics().live_bytes == baseline; }));
  CHECK(rt.statistics().peak_bytes >= baseline + 2 * kBig);
}
