// IntervalFrontier and infer_dependencies on hand-written cases, one hazard rule each.
// frontier_oracle_test.cpp checks the same code against a brute-force model instead.
#include "daemon/engine/interval_frontier.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

namespace accord::engine {
namespace {

constexpr std::uint64_t kBuffer = 7;
constexpr std::uint64_t kOther = 9;

AccessRange read(std::size_t begin, std::size_t end, std::uint64_t allocation = kBuffer) {
  return {allocation, begin, end, Access::Read};
}
AccessRange write(std::size_t begin, std::size_t end, std::uint64_t allocation = kBuffer) {
  return {allocation, begin, end, Access::Write};
}
AccessRange read_write(std::size_t begin, std::size_t end,
                       std::uint64_t allocation = kBuffer) {
  return {allocation, begin, end, Access::ReadWrite};
}

// Records one op's uses and returns its sorted, unique dependencies.
std::vector<OpIndex> record(IntervalFrontier& frontier, OpIndex op,
                            std::initializer_list<AccessRange> uses) {
  std::vector<OpIndex> deps;
  for (const AccessRange& use : uses) frontier.record(op, use, deps);
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

using Deps = std::vector<OpIndex>;

TEST_CASE("read after write orders the read", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 64)}) == Deps{});
  CHECK(record(f, 1, {read(8, 16)}) == Deps{0});
  CHECK(record(f, 2, {read_write(60, 70)}) == Deps{0});
}

TEST_CASE("read after read creates no edge", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {read(0, 64)}) == Deps{});
  CHECK(record(f, 1, {read(0, 64)}) == Deps{});
  CHECK(record(f, 2, {read(10, 20)}) == Deps{});
}

TEST_CASE("write after read orders the write", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {read(0, 16)}) == Deps{});
  CHECK(record(f, 1, {read(8, 32)}) == Deps{});
  CHECK(record(f, 2, {write(12, 14)}) == Deps{0, 1});
  CHECK(record(f, 3, {write(20, 21)}) == Deps{1});
  // The readers of [12, 14) were consumed by op 2; only its write is left there.
  CHECK(record(f, 4, {write(12, 14)}) == Deps{2});
}

TEST_CASE("repeated writes chain instead of fanning in", "[engine][frontier]") {
  IntervalFrontier f;
  for (OpIndex op = 0; op < 5; ++op) {
    const Deps expected = op == 0 ? Deps{} : Deps{op - 1};
    CHECK(record(f, op, {write(0, 32)}) == expected);
  }
  CHECK(record(f, 5, {read(0, 32)}) == Deps{4});
}

TEST_CASE("readers between writes are all ordered before the next write",
          "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 32)}) == Deps{});
  CHECK(record(f, 1, {read(0, 8)}) == Deps{0});
  CHECK(record(f, 2, {read(8, 16)}) == Deps{0});
  CHECK(record(f, 3, {read(0, 32)}) == Deps{0});
  CHECK(record(f, 4, {write(0, 32)}) == Deps{0, 1, 2, 3});
  CHECK(record(f, 5, {write(0, 32)}) == Deps{4});
}

TEST_CASE("self edges are dropped", "[engine][frontier]") {
  IntervalFrontier f;
  // One op reaching the same bytes through two bindings, in either order.
  CHECK(record(f, 0, {read(0, 16), write(0, 16)}) == Deps{});
  CHECK(record(f, 1, {write(0, 16), read(0, 16)}) == Deps{0});
  CHECK(record(f, 2, {read_write(4, 8), read_write(0, 16)}) == Deps{1});
}

TEST_CASE("empty ranges are ignored", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 64)}) == Deps{});
  CHECK(record(f, 1, {write(8, 8), read(64, 64)}) == Deps{});
  CHECK(record(f, 2, {read(10, 10)}) == Deps{});
  // The empty write did not become the writer of byte 8.
  CHECK(record(f, 3, {read(8, 9)}) == Deps{0});
}

TEST_CASE("different allocations never order", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 64, kBuffer)}) == Deps{});
  CHECK(record(f, 1, {write(0, 64, kOther)}) == Deps{});
  CHECK(record(f, 2, {read_write(0, 64, kOther)}) == Deps{1});
  CHECK(record(f, 3, {read(0, 64, kBuffer)}) == Deps{0});
}

TEST_CASE("disjoint ranges of one allocation never order", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 16)}) == Deps{});
  CHECK(record(f, 1, {write(16, 32)}) == Deps{});
  CHECK(record(f, 2, {read(32, 48)}) == Deps{});
  CHECK(record(f, 3, {write(15, 17)}) == Deps{0, 1});
}

TEST_CASE("the seed's example", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 64)}) == Deps{});
  CHECK(record(f, 1, {read(0, 32)}) == Deps{0});
  CHECK(record(f, 2, {read(64, 96)}) == Deps{});
  CHECK(record(f, 3, {write(16, 80)}) == Deps{0, 1, 2});
  CHECK(record(f, 4, {read(24, 32)}) == Deps{3});
  CHECK(record(f, 5, {write(0, 96, kOther)}) == Deps{});
}

TEST_CASE("clear forgets every earlier access", "[engine][frontier]") {
  IntervalFrontier f;
  CHECK(record(f, 0, {write(0, 64), write(0, 8, kOther)}) == Deps{});
  f.clear();
  CHECK(record(f, 1, {read(0, 64), read(0, 8, kOther)}) == Deps{});
  CHECK(record(f, 2, {write(0, 8, kOther)}) == Deps{1});
}

TEST_CASE("many allocations stay distinct", "[engine][frontier]") {
  // Enough identities to grow the allocation table several times.
  IntervalFrontier f;
  for (OpIndex op = 0; op < 200; ++op) {
    CHECK(record(f, op, {write(0, 8, 1000 + 64 * op)}) == Deps{});
  }
  for (OpIndex op = 0; op < 200; ++op) {
    CHECK(record(f, 200 + op, {read(0, 8, 1000 + 64 * op)}) == Deps{op});
  }
}

TEST_CASE("infer_dependencies returns sorted unique rows", "[engine][frontier]") {
  const std::vector<std::vector<AccessRange>> uses = {
      {write(0, 64), write(0, 64, kOther)},
      {read(0, 32)},
      {read(64, 96)},
      {write(16, 80), read(0, 8, kOther), read(8, 16, kOther)},
      {read(24, 32)},
      {write(0, 96, kOther)},
  };
  std::vector<std::span<const AccessRange>> ops(uses.begin(), uses.end());
  const DependencyLists lists = infer_dependencies(ops);
  REQUIRE(lists.offsets.size() == uses.size() + 1);
  const std::vector<Deps> expected = {{}, {0}, {}, {0, 1, 2}, {3}, {0, 3}};
  for (OpIndex op = 0; op < uses.size(); ++op) {
    CAPTURE(op);
    const auto row = lists.of(op);
    CHECK(Deps(row.begin(), row.end()) == expected[op]);
  }
}

TEST_CASE("infer_dependencies accepts an empty graph", "[engine][frontier]") {
  const DependencyLists lists = infer_dependencies({});
  CHECK(lists.offsets == std::vector<std::uint32_t>{0});
  CHECK(lists.deps.empty());
}

}  // namespace
}  // namespace accord::engine
