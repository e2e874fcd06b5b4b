// The session's completion handles (daemon/service/completion_table.h): reservations are
// invisible, handles are never below 2^32 nor given out twice (a spent slot retires), and
// the table grows only past the most handles it ever held.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "daemon/service/completion_table.h"

using accord::engine::Submission;
using accord::service::CompletionTable;

namespace {

// The table never dereferences an observer, so distinct addresses stand in for them.
Submission* fake_observer(std::size_t n) {
  static std::vector<char> storage(1024);
  return reinterpret_cast<Submission*>(storage.data() + n);
}

}  // namespace

TEST_CASE("a reservation is invisible until filled, then found until removed", "[service][completions]") {
  CompletionTable table(4);
  const std::uint64_t handle = table.reserve();
  CHECK(handle >= (std::uint64_t{1} << 32));
  CHECK(table.size() == 1);
  CHECK(table.find(handle) == nullptr);
  CHECK(table.remove(handle) == nullptr);  // a reservation is not removed as a completion
  REQUIRE(table.fill(handle, fake_observer(1)));
  CHECK_FALSE(table.fill(handle, fake_observer(2)));  // filled once
  CHECK(table.find(handle) == fake_observer(1));
  CHECK(table.remove(handle) == fake_observer(1));
  CHECK(table.size() == 0);
  CHECK(table.find(handle) == nullptr);
  CHECK(table.remove(handle) == nullptr);
}

TEST_CASE("a released handle stays stale after its slot is reused", "[service][completions]") {
  CompletionTable table(1);
  const std::uint64_t first = table.reserve();
  REQUIRE(table.fill(first, fake_observer(1)));
  REQUIRE(table.remove(first) == fake_observer(1));
  const std::uint64_t second = table.reserve();
  CHECK(second != first);
  CHECK((second & 0xffffffffu) == (first & 0xffffffffu));  // the same slot, a new generation
  REQUIRE(table.fill(second, fake_observer(2)));
  CHECK(table.find(first) == nullptr);
  CHECK(table.remove(first) == nullptr);
  CHECK(table.find(second) == fake_observer(2));
}

TEST_CASE("handles a client makes up are not found", "[service][completions]") {
  CompletionTable table(4);
  const std::uint64_t real = table.reserve();
  REQUIRE(table.fill(real, fake_observer(1)));
  const std::uint64_t made_up[] = {0, 1, 3, real + 1, real ^ (std::uint64_t{1} << 40), ~std::uint64_t{0},
                                   real & 0xffffffffu};
  for (const std::uint64_t bogus : made_up) {
    CAPTURE(bogus);
    CHECK(table.find(bogus) == nullptr);
    CHECK(table.remove(bogus) == nullptr);
    CHECK_FALSE(table.fill(bogus, fake_observer(2)));
    table.cancel(bogus);
  }
  CHECK(table.find(real) == fake_observer(1));
  CHECK(table.size() == 1);
}

TEST_CASE("cancel drops only a reservation", "[service][completions]") {
  CompletionTable table(2);
  const std::uint64_t reserved = table.reserve();
  const std::uint64_t filled = table.reserve();
  REQUIRE(table.fill(filled, fake_observer(1)));
  table.cancel(filled);  // not a reservation: kept
  CHECK(table.find(filled) == fake_observer(1));
  table.cancel(reserved);
  CHECK(table.size() == 1);
  CHECK_FALSE(table.fill(reserved, fake_observer(2)));
}

TEST_CASE("the table grows past its slots and every held handle stays distinct", "[service][completions]") {
  CompletionTable table(2);
  std::vector<std::uint64_t> handles;
  std::set<std::uint64_t> distinct;
  for (std::size_t i = 0; i < 100; ++i) {
    handles.push_back(table.reserve());
    distinct.insert(handles.back());
    REQUIRE(table.fill(handles.back(), fake_observer(i)));
  }
  CHECK(distinct.size() == 100);
  CHECK(table.size() == 100);
  for (std::size_t i = 0; i < 100; ++i) CHECK(table.find(handles[i]) == fake_observer(i));
}

TEST_CASE("drain hands over every filled observer and empties the table", "[service][completions]") {
  CompletionTable table(4);
  const std::uint64_t a = table.reserve();
  const std::uint64_t b = table.reserve();
  static_cast<void>(table.reserve());  // a reservation: dropped, no observer to hand over
  REQUIRE(table.fill(a, fake_observer(1)));
  REQUIRE(table.fill(b, fake_observer(2)));
  std::set<Submission*> drained;
  table.drain([&](Submission* s) { drained.insert(s); });
  CHECK(drained == std::set<Submission*>{fake_observer(1), fake_observer(2)});
  CHECK(table.size() == 0);
  CHECK(table.find(a) == nullptr);
  CHECK(table.find(b) == nullptr);
}

TEST_CASE("a slot whose generations are spent retires instead of giving out an old handle again",
          "[service][completions]") {
  CompletionTable table(1);
  table.set_generation_for_testing(0, UINT32_MAX);
  const std::uint64_t last = table.reserve();
  CHECK(last >> 32 == UINT32_MAX);
  REQUIRE(table.fill(last, fake_observer(1)));
  REQUIRE(table.remove(last) == fake_observer(1));
  // The slot is retired: the next handle comes from a new slot, and the old one is stale.
  const std::uint64_t next = table.reserve();
  CHECK((next & 0xffffffffu) == 1);
  CHECK(next >> 32 == 1);
  CHECK(table.find(last) == nullptr);
  CHECK_FALSE(table.fill(last, fake_observer(2)));
  CHECK(table.size() == 1);
  std::size_t drained = 0;
  REQUIRE(table.fill(next, fake_observer(3)));
  table.drain([&](Submission*) { ++drained; });
  CHECK(drained == 1);
}
