// Record-time contract checks (ARCHITECTURE.md engine item 11) on plain extents:
// structural validation, binding count, minimum extent, offset alignment and writable
// aliasing. The engine and the client builder both call check_bindings().
#include <catch2/catch.hpp>

#include "accord/contract.h"

using accord::Access;
using accord::BindingContract;
using accord::BoundExtent;
using accord::ErrorKind;
using accord::KernelContract;
using accord::Status;
using Catch::Contains;

namespace {

KernelContract two_bindings(Access first, Access second, std::size_t bytes = 64, std::size_t alignment = 16) {
  KernelContract c;
  c.bindings.push_back({bytes, alignment, first, "in"});
  c.bindings.push_back({bytes, alignment, second, "out"});
  return c;
}

}  // namespace

TEST_CASE("a contract needs nonzero extents and power-of-two alignments", "[api][contract]") {
  KernelContract c = two_bindings(Access::Read, Access::Write);
  CHECK(c.validate().ok());
  c.bindings[1].bytes = 0;
  Status s = c.validate();
  CHECK(s.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(s.message()), Contains("binding 1") && Contains("bytes"));
  c.bindings[1].bytes = 64;
  c.bindings[0].alignment = 12;
  s = c.validate();
  CHECK_THAT(std::string(s.message()), Contains("binding 0") && Contains("power of two"));
}

TEST_CASE("the binding count must match the contract", "[api][contract]") {
  KernelContract c = two_bindings(Access::Read, Access::Write);
  const BoundExtent one[] = {{1, 0, 64}};
  Status s = accord::check_bindings(c, one);
  CHECK(s.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(s.message()), Contains("expects 2 bindings, got 1"));
}

TEST_CASE("a view shorter than the minimum extent is rejected", "[api][contract]") {
  KernelContract c = two_bindings(Access::Read, Access::Write);
  const BoundExtent views[] = {{1, 0, 64}, {2, 0, 63}};
  Status s = accord::check_bindings(c, views);
  CHECK(s.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(s.message()), Contains("binding 1") && Contains("'out'") && Contains("63"));
}

TEST_CASE("a misaligned offset is rejected", "[api][contract]") {
  KernelContract c = two_bindings(Access::Read, Access::Write);
  const BoundExtent views[] = {{1, 8, 64}, {2, 0, 64}};
  Status s = accord::check_bindings(c, views);
  CHECK(s.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(s.message()), Contains("binding 0") && Contains("offset 8") && Contains("16"));
}

TEST_CASE("overlapping writable bindings need the aliasing entry point", "[api][contract]") {
  KernelContract rw = two_bindings(Access::Read, Access::Write);
  const BoundExtent overlapping[] = {{7, 0, 64}, {7, 32, 64}};
  Status s = accord::check_bindings(rw, overlapping);
  CHECK(s.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(s.message()), Contains("overlap"));
  CHECK(accord::check_bindings(rw, overlapping, /*allow_aliasing=*/true).ok());

  SECTION("two readers may overlap") {
    KernelContract rr = two_bindings(Access::Read, Access::Read);
    CHECK(accord::check_bindings(rr, overlapping).ok());
  }
  SECTION("adjacent ranges do not overlap") {
    const BoundExtent adjacent[] = {{7, 0, 64}, {7, 64, 64}};
    CHECK(accord::check_bindings(rw, adjacent).ok());
  }
  SECTION("different allocations never alias") {
    const BoundExtent distinct[] = {{7, 0, 64}, {8, 0, 64}};
    CHECK(accord::check_bindings(rw, distinct).ok());
  }
}
