// Failure is uncertain completion (ARCHITECTURE.md engine item 10): a region that fails
// (test.fail) poisons exactly the allocations its graph uses, quarantines the graph,
// skips its remaining regions and reports Execution. Later use of those allocations is
// DeviceLost; unrelated buffers and graphs keep working.
#include <catch2/catch.hpp>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("a failing kernel poisons exactly the allocations of its graph", "[conformance][failure]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel fail = load_fail(rt);
  const Buffer filled = make_buffer(rt, 32);   // used by the graph, not by the failing node
  const Buffer victim = make_buffer(rt, 32);   // bound to test.fail
  const Buffer unrelated = make_buffer(rt, 32);
  fill_on_host(unrelated, 0x0F);

  Graph g = rt.graph();
  REQUIRE_OK(g.fill(filled.view(), 7));
  REQUIRE_OK(g.host(fail, {victim.view()}));
  const ExecutableGraph doomed = prepare(std::move(g));
  // Prepared before the failure, over a buffer that the failing graph uses.
  const ExecutableGraph later = fill_graph(rt, slice_of(filled, 0, 8), 1);
  const ExecutableGraph bystander = fill_graph(rt, unrelated.view(), 0x2F);
  const std::uint64_t completions_before = rt.statistics().completions;

  const Completion failed = UNWRAP(doomed.submit());
  const Status status = failed.wait();
  CHECK_STATUS(status, FailsWith(ErrorKind::Execution, {"injected failure"}));
  CHECK(failed.poll());
  REQUIRE(failed.result().has_value());
  CHECK_STATUS(*failed.result(), FailsWith(ErrorKind::Execution, {"injected failure"}));
  CHECK(eventually([&] { return rt.statistics().completions == completions_before + 1; }));
  REQUIRE(failed.profile().has_value());  // a failed submission is terminal: it has a profile
  CHECK(failed.profile()->elapsed_us >= 0.0);

  SECTION("maps of the poisoned allocations are DeviceLost, through any alias or view") {
    const Buffer alias = filled;
    CHECK_STATUS(filled.map_read(), FailsWith(ErrorKind::DeviceLost));
    CHECK_STATUS(filled.try_map_write(), FailsWith(ErrorKind::DeviceLost));
    CHECK_STATUS(alias.try_map_read(), FailsWith(ErrorKind::DeviceLost));
    CHECK_STATUS(victim.map_write(), FailsWith(ErrorKind::DeviceLost));
    CHECK_STATUS(slice_of(victim, 8, 16).map_read(), FailsWith(ErrorKind::DeviceLost));
  }
  SECTION("resubmitting the graph is DeviceLost") {
    CHECK_STATUS(doomed.submit(), FailsWith(ErrorKind::DeviceLost));
  }
  SECTION("submitting another prepared graph over a poisoned allocation is DeviceLost") {
    CHECK_STATUS(later.submit(), FailsWith(ErrorKind::DeviceLost));
  }
  SECTION("new work over a poisoned allocation is DeviceLost at the latest at submit") {
    // Recording or prepare may already refuse; if they do, it must be DeviceLost.
    const Buffer fresh = make_buffer(rt, 32);
    Graph g2 = rt.graph();
    auto node = g2.copy(fresh.view(), filled.view());
    if (!node.ok()) {
      CHECK_STATUS(node, FailsWith(ErrorKind::DeviceLost));
    } else {
      auto exec = std::move(g2).prepare();
      if (!exec.ok()) {
        CHECK_STATUS(exec, FailsWith(ErrorKind::DeviceLost));
      } else {
        CHECK_STATUS(exec->submit(), FailsWith(ErrorKind::DeviceLost));
      }
    }
    CHECK(read_bytes(fresh) == repeated(32, 0));  // the fresh buffer was never touched
  }
  SECTION("an unrelated buffer and graph keep working") {
    CHECK(read_bytes(unrelated) == repeated(32, 0x0F));
    run_once(bystander);
    CHECK(read_bytes(unrelated) == repeated(32, 0x2F));
    const Buffer fresh = make_buffer(rt, 32);
    const ExecutableGraph copy = copy_graph(rt, fresh.view(), unrelated.view());
    run_once(copy);
    CHECK(read_bytes(fresh) == repeated(32, 0x2F));
  }
}

TEST_CASE("regions after a failed region of the same submission are skipped", "[conformance][failure]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel fail = load_fail(rt);
  const Buffer victim = make_buffer(rt, 16);
  const Buffer downstream = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(fail, {victim.view()}));                                 // Host region
  REQUIRE_OK(g.copy_on(downstream.view(), victim.view(), GpuLane::Download));  // follows it
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 2);
  REQUIRE(exec.region(1).predecessors == std::vector<std::size_t>{0});

  REQUIRE_OK(rt.start_trace(16));
  const Completion failed = UNWRAP(exec.submit());
  CHECK_STATUS(failed.wait(), FailsWith(ErrorKind::Execution, {"injected failure"}));
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  // Exactly one region executed, on the Host lane, and it is marked failed; the
  // Download-lane copy never ran.
  REQUIRE(trace->events.size() == 1);
  CHECK(trace->events[0].lane == LaneKind::Host);
  CHECK(trace->events[0].failed);
  CHECK(rt.statistics().downloaded_bytes == 0);
}

TEST_CASE("work queued behind a failed submission over a poisoned buffer does not succeed",
          "[conformance][failure]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel fail = load_fail(rt);
  const Kernel sleeper = load_sleep(rt, 100'000);
  const Buffer shared = make_buffer(rt, 16);
  const Buffer out = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(sleeper, {shared.view()}));  // holds the failing submission pending
  REQUIRE_OK(g.host(fail, {shared.view()}));
  const ExecutableGraph doomed = prepare(std::move(g));
  const ExecutableGraph reader = copy_graph(rt, out.view(), shared.view());

  const Completion failed = UNWRAP(doomed.submit());
  auto queued = reader.submit();  // accepted before the failure: shared is not yet poisoned
  REQUIRE_OK(queued);
  CHECK_STATUS(failed.wait(), FailsWith(ErrorKind::Execution, {"injected failure"}));
  const Status queued_status = queued->wait();
  CHECK_STATUS(queued_status, Fails());  // it would read bytes of uncertain content
  // `out` is either poisoned too (the reader failed while using it) or untouched.
  const auto mapped = out.map_read();
  if (mapped.ok()) {
    CHECK(mapped->bytes().size() == 16);
    for (std::byte b : mapped->bytes()) CHECK(std::to_integer<int>(b) == 0);
  } else {
    CHECK_STATUS(mapped, FailsWith(ErrorKind::DeviceLost));
  }
}
