// AccessSummary: the disjoint, flagged union of a graph's uses, and the conflict test
// between two summaries that orders submissions and checks host leases.
#include "daemon/engine/access_summary.h"

#include <catch2/catch.hpp>
#include <vector>

namespace accord::engine {
namespace {

constexpr std::uint64_t kBuffer = 7;
constexpr std::uint64_t kOther = 9;

AccessRange use(std::size_t begin, std::size_t end, Access access,
                std::uint64_t allocation = kBuffer) {
  return {allocation, begin, end, access};
}

struct Expected {
  std::uint64_t allocation;
  std::size_t begin;
  std::size_t end;
  bool read;
  bool write;
};

void check_intervals(const AccessSummary& summary, const std::vector<Expected>& expected) {
  const auto got = summary.intervals();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].allocation == expected[i].allocation);
    CHECK(got[i].begin == expected[i].begin);
    CHECK(got[i].end == expected[i].end);
    CHECK(got[i].read == expected[i].read);
    CHECK(got[i].write == expected[i].write);
  }
}

AccessSummary summary_of(std::initializer_list<AccessRange> uses) {
  return AccessSummary::build(std::vector<AccessRange>(uses));
}

TEST_CASE("an empty summary has no intervals and writes nothing", "[engine][summary]") {
  const AccessSummary s = summary_of({});
  CHECK(s.intervals().empty());
  CHECK_FALSE(s.writes_anything());
  CHECK_FALSE(s.conflicts(s));
}

TEST_CASE("overlapping uses become disjoint intervals", "[engine][summary]") {
  const AccessSummary s = summary_of({use(0, 32, Access::Read), use(16, 48, Access::Write)});
  check_intervals(s, {{kBuffer, 0, 16, true, false},
                      {kBuffer, 16, 32, true, true},
                      {kBuffer, 32, 48, false, true}});
  CHECK(s.writes_anything());
}

TEST_CASE("adjacent and overlapping uses with equal flags merge", "[engine][summary]") {
  const AccessSummary s = summary_of({use(16, 32, Access::Read), use(0, 16, Access::Read),
                                      use(8, 24, Access::Read), use(40, 48, Access::Read)});
  check_intervals(s, {{kBuffer, 0, 32, true, false}, {kBuffer, 40, 48, true, false}});
  CHECK_FALSE(s.writes_anything());
}

TEST_CASE("read-write uses carry both flags", "[engine][summary]") {
  const AccessSummary s =
      summary_of({use(0, 8, Access::ReadWrite), use(8, 16, Access::Read),
                  use(16, 24, Access::Write), use(24, 32, Access::Read),
                  use(24, 32, Access::Write)});
  check_intervals(s, {{kBuffer, 0, 8, true, true},
                      {kBuffer, 8, 16, true, false},
                      {kBuffer, 16, 24, false, true},
                      {kBuffer, 24, 32, true, true}});
}

TEST_CASE("intervals are sorted by allocation then offset", "[engine][summary]") {
  const AccessSummary s =
      summary_of({use(32, 40, Access::Read, kOther), use(0, 8, Access::Write, kOther),
                  use(8, 16, Access::Read, kBuffer), use(0, 0, Access::Write, kBuffer)});
  check_intervals(s, {{kBuffer, 8, 16, true, false},
                      {kOther, 0, 8, false, true},
                      {kOther, 32, 40, true, false}});
}

TEST_CASE("read after read does not conflict", "[engine][summary]") {
  const AccessSummary a = summary_of({use(0, 64, Access::Read)});
  const AccessSummary b = summary_of({use(16, 32, Access::Read)});
  CHECK_FALSE(a.conflicts(b));
  CHECK_FALSE(b.conflicts(a));
}

TEST_CASE("a writer on either side conflicts", "[engine][summary]") {
  const AccessSummary reader = summary_of({use(0, 64, Access::Read)});
  const AccessSummary writer = summary_of({use(63, 80, Access::Write)});
  const AccessSummary other_writer = summary_of({use(8, 9, Access::ReadWrite)});
  CHECK(reader.conflicts(writer));        // WAR
  CHECK(writer.conflicts(reader));        // RAW
  CHECK(reader.conflicts(other_writer));
  CHECK_FALSE(writer.conflicts(other_writer));  // disjoint bytes
  CHECK(writer.conflicts(summary_of({use(70, 71, Access::Write)})));  // WAW
}

TEST_CASE("a conflict deep in both lists is found", "[engine][summary]") {
  const AccessSummary a = summary_of({use(0, 4, Access::Write), use(10, 14, Access::Write),
                                      use(20, 24, Access::Read), use(30, 34, Access::Write),
                                      use(0, 4, Access::Read, kOther)});
  const AccessSummary b = summary_of({use(4, 10, Access::Write), use(14, 20, Access::Write),
                                      use(22, 23, Access::Read), use(33, 40, Access::Read)});
  CHECK(a.conflicts(b));
  CHECK(b.conflicts(a));
  const AccessSummary c = summary_of({use(4, 10, Access::Write), use(14, 20, Access::Write),
                                      use(22, 23, Access::Read), use(34, 40, Access::Read)});
  CHECK_FALSE(a.conflicts(c));
}

TEST_CASE("different allocations do not conflict", "[engine][summary]") {
  const AccessSummary a = summary_of({use(0, 64, Access::Write, kBuffer)});
  const AccessSummary b = summary_of({use(0, 64, Access::Write, kOther)});
  CHECK_FALSE(a.conflicts(b));
  CHECK_FALSE(b.conflicts(a));
}

TEST_CASE("adjacent but not overlapping intervals do not conflict", "[engine][summary]") {
  const AccessSummary a = summary_of({use(0, 32, Access::Write)});
  const AccessSummary b = summary_of({use(32, 64, Access::Write)});
  CHECK_FALSE(a.conflicts(b));
  CHECK_FALSE(b.conflicts(a));
}

}  // namespace
}  // namespace accord::engine
