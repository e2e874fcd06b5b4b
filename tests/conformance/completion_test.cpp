// Completion observers (ARCHITECTURE.md engine item 7): wait, wait_for (never cancels),
// poll/is_complete, result, cancel (skips unstarted work), the host-observed profile,
// and dropping an observer, which never cancels. Failure results are in failure_test.cpp.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace std::chrono_literals;

TEST_CASE("wait returns OK once the work is done and its writes are visible", "[conformance][completion]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer b = make_buffer(rt, 32);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 0xAB);
  const Completion done = UNWRAP(exec.submit());
  REQUIRE_OK(done.wait());
  CHECK(done.poll());
  CHECK(done.is_complete());
  REQUIRE(done.result().has_value());
  CHECK_OK(*done.result());
  CHECK(read_bytes(b) == repeated(32, 0xAB));
  CHECK_OK(done.wait());  // waiting again returns the same result at once
}

TEST_CASE("wait_for with a short timeout returns false and does not cancel", "[conformance][completion]") {
  CONFORMANCE_RUNTIME(rt, with_workers(2));
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view());
  const Completion pending = UNWRAP(exec.submit());

  const Result<bool> timed = pending.wait_for(1ms);
  REQUIRE_OK(timed);
  CHECK_FALSE(*timed);
  CHECK_FALSE(pending.poll());
  CHECK_FALSE(pending.result().has_value());

  const Result<bool> finished = pending.wait_for(60s);
  REQUIRE_OK(finished);
  CHECK(*finished);
  CHECK_OK(*pending.result());
  CHECK(u32_at(read_bytes(x), 0) == kSleepMarker);  // the work ran to the end
}

TEST_CASE("wait_for on a finished submission returns true at once", "[conformance][completion]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 1);
  const Completion done = UNWRAP(exec.submit());
  REQUIRE_OK(done.wait());
  const Result<bool> again = done.wait_for(0ns);
  REQUIRE_OK(again);
  CHECK(*again);
}

TEST_CASE("poll, is_complete and result report a pending submission as pending", "[conformance][completion]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view());
  const Completion pending = UNWRAP(exec.submit());
  CHECK_FALSE(pending.poll());
  CHECK_FALSE(pending.is_complete());
  CHECK_FALSE(pending.result().has_value());
  CHECK_FALSE(pending.profile().has_value());
  REQUIRE_OK(pending.wait());
  CHECK(pending.poll());
  CHECK(pending.is_complete());
}

TEST_CASE("cancel skips work that has not started", "[conformance][completion][cancel]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph blocker = sleep_graph(rt, x.view());
  Graph g = rt.graph();
  REQUIRE_OK(g.fill(x.view(), 0xAA));  // conflicts with the blocker: queued behind it
  REQUIRE_OK(g.fill(y.view(), 0xBB));  // whole-graph ordering holds this back too
  const ExecutableGraph victim = prepare(std::move(g));
  const std::uint64_t completions_before = rt.statistics().completions;

  const Completion first = UNWRAP(blocker.submit());
  const Completion second = UNWRAP(victim.submit());
  second.cancel();
  CHECK_STATUS(second.wait(), FailsWith(ErrorKind::Cancelled));
  CHECK(second.poll());
  REQUIRE(second.result().has_value());
  CHECK_STATUS(*second.result(), FailsWith(ErrorKind::Cancelled));
  REQUIRE_OK(first.wait());  // cancelling one submission leaves the others alone

  const auto xb = read_bytes(x);
  CHECK(u32_at(xb, 0) == kSleepMarker);
  CHECK(subrange(xb, 4, 16) == repeated(12, 0));
  CHECK(read_bytes(y) == repeated(16, 0));
  CHECK(eventually([&] { return rt.statistics().completions - completions_before == 2; }));

  SECTION("a cancelled submission that never ran has no queue time") {
    REQUIRE(second.profile().has_value());
    CHECK_FALSE(second.profile()->queue_us.has_value());
  }
  SECTION("the graph can be submitted again after a cancel") {
    const Completion again = UNWRAP(victim.submit());
    REQUIRE_OK(again.wait());
    CHECK(read_bytes(y) == repeated(16, 0xBB));
  }
}

TEST_CASE("cancel after completion changes nothing", "[conformance][completion][cancel]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 0x10);
  const Completion done = UNWRAP(exec.submit());
  REQUIRE_OK(done.wait());
  done.cancel();
  CHECK_OK(done.wait());
  CHECK_OK(*done.result());
  CHECK(read_bytes(b) == repeated(8, 0x10));
}

TEST_CASE("a profile appears on completion with elapsed time covering queue time",
          "[conformance][completion][profile]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view(), 100'000);
  const Completion done = UNWRAP(exec.submit());
  CHECK_FALSE(done.profile().has_value());
  REQUIRE_OK(done.wait());
  const auto profile = done.profile();
  REQUIRE(profile.has_value());
  REQUIRE(profile->queue_us.has_value());  // a region ran
  CHECK(*profile->queue_us >= 0.0);
  CHECK(profile->elapsed_us >= *profile->queue_us);
  // Host-observed from acceptance to the result: it includes the 100 ms sleep.
  CHECK(profile->elapsed_us >= 95'000.0);
}

TEST_CASE("dropping a Completion does not cancel the work", "[conformance][completion]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view(), 100'000);
  { const Completion dropped = UNWRAP(exec.submit()); }
  // A later reader of x must see the dropped submission's write.
  const ExecutableGraph reader = copy_graph(rt, y.view(), x.view());
  run_once(reader);
  CHECK(u32_at(read_bytes(y), 0) == kSleepMarker);
  // And a blocking map waits for it too.
  CHECK(u32_at(read_bytes(x), 0) == kSleepMarker);
}

TEST_CASE("copies of a Completion observe the same submission", "[conformance][completion]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view(), 50'000);
  const Completion original = UNWRAP(exec.submit());
  Completion copy = original;
  CHECK(copy.valid());
  REQUIRE_OK(copy.wait());
  CHECK(original.poll());
  const Completion moved = std::move(copy);
  CHECK_FALSE(copy.valid());
  CHECK(moved.valid());
  CHECK(moved.poll());
}

TEST_CASE("several threads can wait on one completion", "[conformance][completion]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view(), 100'000);
  const Completion done = UNWRAP(exec.submit());
  std::vector<std::string> results(4);
  std::vector<std::thread> waiters;
  for (int t = 0; t < 4; ++t) {
    waiters.emplace_back([&, t] {
      const Completion mine = done;
      results[t] = mine.wait().to_string();
    });
  }
  for (auto& w : waiters) w.join();
  for (const auto& r : results) CHECK(r == "OK");
  CHECK(u32_at(read_bytes(x), 0) == kSleepMarker);
}

TEST_CASE("an empty Completion is Invalid to wait on", "[conformance][completion]") {
  const Completion empty;
  CHECK_FALSE(empty.valid());
  CHECK_STATUS(empty.wait(), FailsWith(ErrorKind::Invalid));
}

TEST_CASE("poll never runs work", "[conformance][completion]") {
  // With 0 workers nothing runs until someone waits; polling is not waiting.
  CONFORMANCE_RUNTIME(rt, with_workers(0));
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 0x5C);
  const Completion pending = UNWRAP(exec.submit());
  for (int i = 0; i < 100; ++i) REQUIRE_FALSE(pending.poll());
  CHECK_FALSE(pending.result().has_value());
  REQUIRE_OK(pending.wait());
  CHECK(read_bytes(b) == repeated(8, 0x5C));
}

TEST_CASE("cancelling a running submission drains the running region and skips the rest",
          "[conformance][completion][cancel]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 1, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel sleeper = load_sleep(rt, kLongSleepUs);
  const Buffer x = make_buffer(rt, 16);
  const Buffer downstream = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(sleeper, {x.view()}));                                     // region 0
  REQUIRE_OK(g.copy_on(downstream.view(), x.view(), GpuLane::Download));       // region 1, after it
  const ExecutableGraph exec = prepare(std::move(g));
  const Completion running = UNWRAP(exec.submit());
  std::this_thread::sleep_for(50ms);  // region 0 has most likely started; either way works
  running.cancel();
  CHECK_STATUS(running.wait(), FailsWith(ErrorKind::Cancelled));
  CHECK(read_bytes(downstream) == repeated(16, 0));  // region 1 was skipped
  const std::uint32_t head = u32_at(read_bytes(x), 0);
  CHECK((head == kSleepMarker || head == 0));  // region 0 either drained or never started
}
