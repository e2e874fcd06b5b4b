// The two capacity bounds (ARCHITECTURE.md engine item 6): max_submissions per session
// and graph_slots per prepared graph, both Busy when exhausted and never grown; a slot
// stays reserved while an observer of its completion lives. Zero capacities are Invalid.
// Work is held pending by test.sleep_us, so the cases hold with any number of workers.
#include <catch2/catch.hpp>

#include <optional>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("zero capacities are rejected when the runtime is created", "[conformance][bounds]") {
  RuntimeOptions no_submissions;
  no_submissions.max_submissions = 0;
  CHECK_STATUS(no_submissions.validate(), FailsWith(ErrorKind::Invalid, {"capacit", "max_submissions"}));
  CHECK_STATUS(make_conformance_runtime(no_submissions),
             FailsWith(ErrorKind::Invalid, {"capacit", "max_submissions"}));

  RuntimeOptions no_slots;
  no_slots.graph_slots = 0;
  CHECK_STATUS(no_slots.validate(), FailsWith(ErrorKind::Invalid, {"capacit", "graph_slots"}));
  CHECK_STATUS(make_conformance_runtime(no_slots), FailsWith(ErrorKind::Invalid, {"capacit", "graph_slots"}));

  CHECK_OK(RuntimeOptions{}.validate());
}

TEST_CASE("the default bounds are the seed's", "[conformance][bounds]") {
  CONFORMANCE_RUNTIME(rt);
  CHECK(rt.options().max_submissions == 64);
  CHECK(rt.options().graph_slots == 2);
}

TEST_CASE("submissions beyond max_submissions are Busy until one finishes", "[conformance][bounds]") {
  // A 300 ms sleep on x holds everything that touches x pending, whatever the workers.
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.max_submissions = 3;
  CONFORMANCE_RUNTIME(rt, options);
  const Buffer x = make_buffer(rt, 32);
  const ExecutableGraph blocker = sleep_graph(rt, slice_of(x, 0, 8));
  // Separate graphs, so that graph_slots (2) is not what runs out.
  std::vector<ExecutableGraph> graphs;
  for (std::size_t i = 1; i <= 3; ++i)
    graphs.push_back(fill_graph(rt, x.view(), static_cast<std::uint8_t>(i)));

  std::vector<Completion> pending;
  pending.push_back(UNWRAP(blocker.submit()));
  pending.push_back(UNWRAP(graphs[0].submit()));
  pending.push_back(UNWRAP(graphs[1].submit()));
  const std::uint64_t accepted = rt.statistics().submissions;
  CHECK_STATUS(graphs[2].submit(), FailsWith(ErrorKind::Busy, {"capacity", "submission"}));
  CHECK(rt.statistics().submissions == accepted);  // a refused submit changes nothing

  REQUIRE_OK(pending[0].wait());
  const Completion fourth = UNWRAP(graphs[2].submit());
  REQUIRE_OK(fourth.wait());
  for (auto& c : pending) REQUIRE_OK(c.wait());
  CHECK(read_bytes(x) == repeated(32, 3));  // and they ran in submission order
}

TEST_CASE("max_submissions counts pending work, not observers", "[conformance][bounds]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.max_submissions = 1;
  options.graph_slots = 4;
  CONFORMANCE_RUNTIME(rt, options);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = sleep_graph(rt, b.view(), 100'000);
  const Completion first = UNWRAP(exec.submit());
  CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy));
  REQUIRE_OK(first.wait());
  // `first` is still observed, but finished: it no longer counts against the bound.
  const Completion second = UNWRAP(exec.submit());
  REQUIRE_OK(second.wait());
}

TEST_CASE("graph_slots bound pending submissions of one graph", "[conformance][bounds]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.graph_slots = 2;
  CONFORMANCE_RUNTIME(rt, options);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = sleep_graph(rt, b.view(), 100'000);  // the second queues behind the first
  const Completion first = UNWRAP(exec.submit());
  const Completion second = UNWRAP(exec.submit());
  CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy, {"slot"}));
  // Another graph is not affected by this one's slots.
  const Buffer other = make_buffer(rt, 8);
  const ExecutableGraph other_exec = fill_graph(rt, other.view(), 6);
  const Completion unrelated = UNWRAP(other_exec.submit());
  REQUIRE_OK(second.wait());
  REQUIRE_OK(unrelated.wait());
  CHECK(first.poll());
}

TEST_CASE("a slot stays reserved while an observer of its completed submission lives",
          "[conformance][bounds]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.graph_slots = 2;
  CONFORMANCE_RUNTIME(rt, options);
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 5);

  Completion first = UNWRAP(exec.submit());
  Completion second = UNWRAP(exec.submit());
  REQUIRE_OK(first.wait());
  REQUIRE_OK(second.wait());
  // Both finished, but both still observed: no free slot.
  CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy, {"slot"}));

  SECTION("dropping one observer frees its slot") {
    first = Completion();
    const Completion third = UNWRAP(exec.submit());
    REQUIRE_OK(third.wait());
  }
  SECTION("a copy of an observer keeps the slot reserved") {
    const Completion copy = first;
    first = Completion();
    CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy, {"slot"}));
    second = Completion();  // frees the other slot
    const Completion third = UNWRAP(exec.submit());
    REQUIRE_OK(third.wait());
    CHECK(copy.poll());
  }
  SECTION("a moved-from observer does not count") {
    Completion moved = std::move(first);
    CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy, {"slot"}));
    moved = Completion();
    const Completion third = UNWRAP(exec.submit());
    REQUIRE_OK(third.wait());
  }
}

TEST_CASE("256 submit-wait cycles fit in one graph slot when each completion is dropped",
          "[conformance][bounds]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  RuntimeOptions options = with_workers(workers);
  options.graph_slots = 1;
  CONFORMANCE_RUNTIME(rt, options);
  constexpr std::uint32_t kCount = 4;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 1.0f));  // y += x
  const Buffer x = make_buffer(rt, kCount * 4);
  const Buffer y = make_buffer(rt, kCount * 4);
  write_floats(x, std::vector<float>(kCount, 1.0f));
  Graph g = rt.graph();
  REQUIRE_OK(g.host(saxpy, {x.view(), y.view()}));
  const ExecutableGraph exec = prepare(std::move(g));
  const std::uint64_t submissions_before = rt.statistics().submissions;

  int completed = 0;
  for (int i = 0; i < 256; ++i) {
    auto completion = exec.submit();
    INFO("cycle " << i);
    REQUIRE_OK(completion);
    REQUIRE_OK(completion->wait());
    ++completed;
  }  // each Completion is dropped here, freeing the slot
  CHECK(completed == 256);
  CHECK(rt.statistics().submissions - submissions_before == 256);
  CHECK(read_floats(y) == std::vector<float>(kCount, 256.0f));
}

TEST_CASE("allocations beyond the memory budget are Busy until memory is freed", "[conformance][bounds]") {
  RuntimeOptions options;
  options.memory_budget = 4096;
  CONFORMANCE_RUNTIME(rt, options);
  std::optional<Buffer> big = make_buffer(rt, 3000);
  const std::uint64_t allocations = rt.statistics().allocations;
  CHECK_STATUS(rt.allocate(2000), FailsWith(ErrorKind::Busy));
  CHECK(rt.statistics().allocations == allocations);
  const Buffer small = make_buffer(rt, 1000);  // fits: 4000 <= 4096
  big.reset();
  CHECK(eventually([&] { return rt.allocate(2000).ok(); }));
}
