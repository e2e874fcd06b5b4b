// Submissions (ARCHITECTURE.md engine items 4-5): submit never blocks; conflicting
// graphs run in submission order at whole-graph granularity; independent graphs
// overlap; submit_after adds producers whose failure or cancellation fails the consumer.
// Ordering is proven through data: test.sleep_us writes a marker that later work copies.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("submit returns at once and a later graph sees an earlier pending graph's write",
          "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph producer = sleep_graph(rt, x.view());
  const ExecutableGraph consumer = copy_graph(rt, y.view(), x.view());

  const Completion first = UNWRAP(producer.submit());
  const Completion second = UNWRAP(consumer.submit());
  // The producer sleeps for 300 ms, so neither submission can be finished yet: had
  // submit() waited for the work, both would be.
  CHECK_FALSE(second.poll());
  CHECK_FALSE(first.poll());

  REQUIRE_OK(second.wait());
  CHECK(first.poll());
  CHECK_OK(*first.result());
  const auto bytes = read_bytes(y);
  CHECK(u32_at(bytes, 0) == kSleepMarker);
  CHECK(subrange(bytes, 4, 16) == repeated(12, 0));
}

TEST_CASE("a chain of pending graphs runs in submission order", "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  std::vector<Buffer> stage;
  for (int i = 0; i < 5; ++i) stage.push_back(make_buffer(rt, 8));
  std::vector<ExecutableGraph> graphs;
  graphs.push_back(sleep_graph(rt, stage[0].view(), 100'000));
  for (int i = 0; i + 1 < 5; ++i) graphs.push_back(copy_graph(rt, stage[i + 1].view(), stage[i].view()));

  std::vector<Completion> completions;
  for (const ExecutableGraph& g : graphs) completions.push_back(UNWRAP(g.submit()));
  // Waiting on the last alone must drive (or wait for) everything before it.
  REQUIRE_OK(completions.back().wait());
  for (std::size_t i = 0; i < completions.size(); ++i) {
    INFO("submission " << i);
    CHECK(completions[i].poll());
  }
  CHECK(u32_at(read_bytes(stage[4]), 0) == kSleepMarker);
}

TEST_CASE("a later graph that overwrites a buffer waits for an earlier graph that reads it",
          "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Kernel sleeper = load_sleep(rt, kLongSleepUs);
  Graph a = rt.graph();
  REQUIRE_OK(a.host(sleeper, {x.view()}));  // writes the marker into x after sleeping
  REQUIRE_OK(a.copy(y.view(), x.view()));   // then reads x
  const ExecutableGraph reader = prepare(std::move(a));
  const ExecutableGraph writer = fill_graph(rt, x.view(), 0x55);

  const Completion first = UNWRAP(reader.submit());
  const Completion second = UNWRAP(writer.submit());
  REQUIRE_OK(second.wait());
  CHECK(first.poll());
  const auto copied = read_bytes(y);
  CHECK(u32_at(copied, 0) == kSleepMarker);  // the read happened before the overwrite
  CHECK(subrange(copied, 4, 16) == repeated(12, 0));
  CHECK(read_bytes(x) == repeated(16, 0x55));  // and the overwrite came last
}

TEST_CASE("independent graphs run concurrently on different lanes", "[conformance][scheduling]") {
  // With worker threads, a short Compute-lane graph submitted behind a long Host-lane
  // graph it shares no memory with finishes while the long one still sleeps.
  const std::size_t workers = GENERATE(as<std::size_t>{}, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph slow = sleep_graph(rt, x.view(), 1'000'000);
  const ExecutableGraph quick = fill_graph(rt, y.view(), 0x42);

  const Completion slow_done = UNWRAP(slow.submit());
  const Completion quick_done = UNWRAP(quick.submit());
  REQUIRE_OK(quick_done.wait());
  CHECK_FALSE(slow_done.poll());  // still inside its 1 s sleep
  CHECK(read_bytes(y) == repeated(16, 0x42));
  REQUIRE_OK(slow_done.wait());
  CHECK(u32_at(read_bytes(x), 0) == kSleepMarker);
}

TEST_CASE("submit_after runs the consumer after its producer even without shared memory",
          "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph producer = sleep_graph(rt, x.view());
  const ExecutableGraph consumer = fill_graph(rt, y.view(), 0x24);

  const Completion produced = UNWRAP(producer.submit());
  const Completion consumed = UNWRAP(consumer.submit_after(std::span<const Completion>(&produced, 1)));
  CHECK_FALSE(consumed.poll());
  REQUIRE_OK(consumed.wait());
  // The consumer could only finish after the producer had finished (and written x).
  CHECK(produced.poll());
  CHECK_OK(*produced.result());
  CHECK(read_bytes(y) == repeated(16, 0x24));
  CHECK(u32_at(read_bytes(x), 0) == kSleepMarker);
}

TEST_CASE("submit_after waits for every producer", "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x1 = make_buffer(rt, 8);
  const Buffer x2 = make_buffer(rt, 8);
  const Buffer y = make_buffer(rt, 8);
  const ExecutableGraph p1 = sleep_graph(rt, x1.view(), 50'000);
  const ExecutableGraph p2 = sleep_graph(rt, x2.view(), 150'000);
  const ExecutableGraph consumer = fill_graph(rt, y.view(), 1);
  const std::vector<Completion> producers{UNWRAP(p1.submit()), UNWRAP(p2.submit())};
  const Completion consumed = UNWRAP(consumer.submit_after(producers));
  REQUIRE_OK(consumed.wait());
  CHECK(producers[0].poll());
  CHECK(producers[1].poll());
}

TEST_CASE("a failed producer fails its consumer", "[conformance][scheduling][failure]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer victim = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Kernel fail = load_fail(rt);
  Graph pg = rt.graph();
  REQUIRE_OK(pg.host(fail, {victim.view()}));
  const ExecutableGraph producer = prepare(std::move(pg));
  const ExecutableGraph consumer = fill_graph(rt, y.view(), 0x77);

  const Completion produced = UNWRAP(producer.submit());
  const Completion consumed = UNWRAP(consumer.submit_after(std::span<const Completion>(&produced, 1)));
  const Status consumer_status = consumed.wait();
  CHECK_STATUS(consumer_status, Fails());
  CHECK_STATUS(produced.wait(), FailsWith(ErrorKind::Execution, {"injected failure"}));
  // The consumer never ran: y (not used by the failed graph, so not poisoned) is intact.
  CHECK(read_bytes(y) == repeated(16, 0));
}

TEST_CASE("a cancelled producer fails its consumer", "[conformance][scheduling][cancel]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const ExecutableGraph blocker = sleep_graph(rt, x.view());
  const ExecutableGraph producer = fill_graph(rt, x.view(), 0x99);  // queued behind blocker
  const ExecutableGraph consumer = fill_graph(rt, y.view(), 0x77);

  const Completion blocked_on = UNWRAP(blocker.submit());
  const Completion produced = UNWRAP(producer.submit());
  const Completion consumed = UNWRAP(consumer.submit_after(std::span<const Completion>(&produced, 1)));
  produced.cancel();  // the blocker still sleeps: the producer has not started

  CHECK_STATUS(consumed.wait(), Fails());
  CHECK_STATUS(produced.wait(), FailsWith(ErrorKind::Cancelled));
  REQUIRE_OK(blocked_on.wait());
  CHECK(read_bytes(y) == repeated(16, 0));
  const auto xb = read_bytes(x);
  CHECK(u32_at(xb, 0) == kSleepMarker);          // the blocker ran
  CHECK(subrange(xb, 4, 16) == repeated(12, 0));  // the cancelled fill did not
}

TEST_CASE("many repeated submissions of one graph all take effect in order", "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.graph_slots = 8;
  CONFORMANCE_RUNTIME(rt, options);
  constexpr std::uint32_t kCount = 16;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 1.0f));  // y += x
  const Buffer x = make_buffer(rt, kCount * 4);
  const Buffer y = make_buffer(rt, kCount * 4);
  std::vector<float> ones(kCount, 1.0f);
  write_floats(x, ones);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(saxpy, {x.view(), y.view()}));
  const ExecutableGraph exec = prepare(std::move(g));

  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Completion> pending;
    for (int i = 0; i < 8; ++i) pending.push_back(UNWRAP(exec.submit()));
    REQUIRE_OK(pending.back().wait());
    for (const Completion& c : pending) {
      REQUIRE(c.poll());
      CHECK_OK(*c.result());
    }
  }
  CHECK(read_floats(y) == std::vector<float>(kCount, 8.0f * kRounds));
}

TEST_CASE("submissions from several threads at once all complete correctly", "[conformance][scheduling]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  constexpr std::uint32_t kCount = 8;
  constexpr int kThreads = 4;
  constexpr int kIterations = 25;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 2.0f));  // y += 2x
  std::vector<Buffer> xs, ys;
  std::vector<ExecutableGraph> graphs;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(make_buffer(rt, kCount * 4));
    ys.push_back(make_buffer(rt, kCount * 4));
    write_floats(xs.back(), std::vector<float>(kCount, static_cast<float>(t + 1)));
    Graph g = rt.graph();
    REQUIRE_OK(g.host(saxpy, {xs.back().view(), ys.back().view()}));
    graphs.push_back(prepare(std::move(g)));
  }
  // Catch2 assertions are not thread-safe: threads only record their failures.
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations && errors[t].empty(); ++i) {
        auto c = graphs[t].submit();
        if (!c.ok()) {
          errors[t] = "submit: " + c.status().to_string();
          break;
        }
        if (Status s = c->wait(); !s.ok()) errors[t] = "wait: " + s.to_string();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(errors[t] == "");
    CHECK(read_floats(ys[t]) == std::vector<float>(kCount, 2.0f * (t + 1) * kIterations));
  }
}

TEST_CASE("one lane runs one region at a time, even across independent graphs",
          "[conformance][scheduling][lanes]") {
  // Two Host-lane sleeps on unrelated buffers: free workers are available, but the
  // Host lane admits one region at a time, so the trace shows them back to back.
  const std::size_t workers = GENERATE(as<std::size_t>{}, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x1 = make_buffer(rt, 8);
  const Buffer x2 = make_buffer(rt, 8);
  const ExecutableGraph first = sleep_graph(rt, x1.view(), 150'000);
  const ExecutableGraph second = sleep_graph(rt, x2.view(), 150'000);
  REQUIRE_OK(rt.start_trace(8));
  const Completion c1 = UNWRAP(first.submit());
  const Completion c2 = UNWRAP(second.submit());
  REQUIRE_OK(c1.wait());
  REQUIRE_OK(c2.wait());
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  REQUIRE(trace->events.size() == 2);
  TraceEvent a = trace->events[0];
  TraceEvent b = trace->events[1];
  if (b.start_us < a.start_us) std::swap(a, b);
  CHECK(a.lane == LaneKind::Host);
  CHECK(b.lane == LaneKind::Host);
  // Concurrent regions would overlap by about 150 ms; 5 ms covers timestamp skew.
  CHECK(b.start_us >= a.start_us + a.duration_us - 5'000.0);
}

TEST_CASE("a later graph waits whole for an earlier conflicting one, including its unrelated regions",
          "[conformance][scheduling]") {
  // Ordering across submissions is at whole-graph granularity: the later graph's
  // Compute-lane fill of an unrelated buffer does not start before the earlier graph
  // (which it conflicts with only through its Upload-lane copy) has finished.
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Buffer z = make_buffer(rt, 16);
  const ExecutableGraph earlier = sleep_graph(rt, x.view(), 200'000);
  Graph g = rt.graph();
  REQUIRE_OK(g.fill(z.view(), 1));                              // Compute, unrelated
  REQUIRE_OK(g.copy_on(y.view(), x.view(), GpuLane::Upload));   // Upload, reads x
  const ExecutableGraph later = prepare(std::move(g));
  REQUIRE(later.regions() == 2);
  REQUIRE(later.region(1).predecessors.empty());  // within the graph the two are independent

  REQUIRE_OK(rt.start_trace(8));
  const Completion c1 = UNWRAP(earlier.submit());
  const Completion c2 = UNWRAP(later.submit());
  REQUIRE_OK(c2.wait());
  CHECK(c1.poll());
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  REQUIRE(trace->events.size() == 3);
  const TraceEvent* sleep = nullptr;
  const TraceEvent* fill = nullptr;
  for (const TraceEvent& e : trace->events) {
    if (e.lane == LaneKind::Host) sleep = &e;
    if (e.lane == LaneKind::Compute) fill = &e;
  }
  REQUIRE(sleep != nullptr);
  REQUIRE(fill != nullptr);
  CHECK(fill->start_us >= sleep->start_us + sleep->duration_us - 5'000.0);
  CHECK(u32_at(read_bytes(y), 0) == kSleepMarker);
}

TEST_CASE("submit_after takes at most 16 producers", "[conformance][scheduling]") {
  RuntimeOptions options;
  options.max_submissions = 64;
  CONFORMANCE_RUNTIME(rt, options);
  std::vector<Buffer> buffers;
  std::vector<ExecutableGraph> graphs;
  std::vector<Completion> producers;
  for (int i = 0; i < 17; ++i) {
    buffers.push_back(make_buffer(rt, 8));
    graphs.push_back(fill_graph(rt, buffers.back().view(), 1));
    producers.push_back(UNWRAP(graphs.back().submit()));
  }
  const Buffer out = make_buffer(rt, 8);
  const ExecutableGraph consumer = fill_graph(rt, out.view(), 2);
  CHECK_STATUS(consumer.submit_after(producers), FailsWith(ErrorKind::Invalid, {"16", "producer"}));
  const Completion ok = UNWRAP(consumer.submit_after(std::span<const Completion>(producers).first(16)));
  REQUIRE_OK(ok.wait());
  for (std::size_t i = 0; i < 16; ++i) CHECK(producers[i].poll());
  REQUIRE_OK(producers[16].wait());
}

TEST_CASE("independent regions of one submission run concurrently on different lanes",
          "[conformance][scheduling][lanes]") {
  // Region 0 sleeps for 1 s on the Host lane; region 1, a Compute-lane fill that shares
  // nothing with it, starts long before that sleep ends. (Half a second of slack: only a
  // stall that long could make a correct scheduler fail this.)
  const std::size_t workers = GENERATE(as<std::size_t>{}, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Kernel sleeper = load_sleep(rt, 1'000'000);
  const Buffer x = make_buffer(rt, 16);
  const Buffer z = make_buffer(rt, 16);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(sleeper, {x.view()}));
  REQUIRE_OK(g.fill(z.view(), 3));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 2);
  REQUIRE(exec.region(1).predecessors.empty());
  REQUIRE_OK(rt.start_trace(8));
  run_once(exec);
  const auto trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  REQUIRE(trace->events.size() == 2);
  const TraceEvent& first = trace->events[0].lane == LaneKind::Host ? trace->events[0] : trace->events[1];
  const TraceEvent& second = trace->events[0].lane == LaneKind::Host ? trace->events[1] : trace->events[0];
  REQUIRE(first.lane == LaneKind::Host);
  REQUIRE(second.lane == LaneKind::Compute);
  CHECK(second.start_us < first.start_us + first.duration_us - 500'000.0);
}

TEST_CASE("submit_after an already finished producer", "[conformance][scheduling]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 8);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph consumer = fill_graph(rt, b.view(), 2);

  SECTION("that succeeded runs normally") {
    const ExecutableGraph producer = fill_graph(rt, a.view(), 1);
    const Completion produced = UNWRAP(producer.submit());
    REQUIRE_OK(produced.wait());
    const Completion consumed = UNWRAP(consumer.submit_after(std::span<const Completion>(&produced, 1)));
    REQUIRE_OK(consumed.wait());
    CHECK(read_bytes(b) == repeated(8, 2));
  }
  SECTION("that failed fails the consumer, at submit or at wait") {
    const Kernel fail = load_fail(rt);
    Graph pg = rt.graph();
    REQUIRE_OK(pg.host(fail, {a.view()}));
    const ExecutableGraph producer = prepare(std::move(pg));
    const Completion produced = UNWRAP(producer.submit());
    CHECK_STATUS(produced.wait(), FailsWith(ErrorKind::Execution));
    auto consumed = consumer.submit_after(std::span<const Completion>(&produced, 1));
    if (consumed.ok()) CHECK_STATUS(consumed->wait(), Fails());
    CHECK(read_bytes(b) == repeated(8, 0));
  }
}

TEST_CASE("submit_after an empty Completion is Invalid", "[conformance][scheduling]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph consumer = fill_graph(rt, b.view(), 2);
  const Completion empty;
  CHECK_STATUS(consumer.submit_after(std::span<const Completion>(&empty, 1)), FailsWith(ErrorKind::Invalid));
}

TEST_CASE("a chain of max_submissions pending graphs completes in order", "[conformance][scheduling][stress]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const std::size_t n = rt.options().max_submissions;
  std::vector<Buffer> stage;
  for (std::size_t i = 0; i <= n; ++i) stage.push_back(make_buffer(rt, 8));
  std::vector<ExecutableGraph> graphs;
  graphs.push_back(sleep_graph(rt, stage[0].view()));  // 300 ms: nothing below finishes early
  for (std::size_t i = 1; i < n; ++i) graphs.push_back(copy_graph(rt, stage[i].view(), stage[i - 1].view()));
  const Buffer extra = make_buffer(rt, 8);
  const ExecutableGraph one_more = fill_graph(rt, extra.view(), 1);
  std::vector<Completion> completions;
  for (const ExecutableGraph& g : graphs) completions.push_back(UNWRAP(g.submit()));
  CHECK_STATUS(one_more.submit(), FailsWith(ErrorKind::Busy));  // all n in flight
  REQUIRE_OK(completions.back().wait());
  for (const Completion& c : completions) CHECK(c.poll());
  CHECK(u32_at(read_bytes(stage[n - 1]), 0) == kSleepMarker);
}
