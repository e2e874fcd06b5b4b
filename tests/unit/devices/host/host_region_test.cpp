// HostRegion: lowering a run into a task list and launching it. Covers in-order
// execution of fill, copy and kernel tasks, lower()'s refusals (Invalid naming the op
// and binding), and that launching performs no heap allocation (counted below).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "accord/builtin_kernels.h"
#include "daemon/devices/host/host_region.h"
#include "tests/support/counting_new.h"
#include "host_test_support.h"

using namespace accord;
using namespace accord::devices;
using namespace accord::devices::host;
using namespace accord::devices::host::testing;

using accord::testing::allocations_during;

namespace {

Operation fill_op(std::span<const OperationBinding> bindings, std::uint8_t value) {
  Operation op;
  op.kind = OpKind::Fill;
  op.fill_value = value;
  op.bindings = bindings;
  return op;
}

Operation copy_op(std::span<const OperationBinding> bindings) {
  Operation op;
  op.kind = OpKind::Copy;
  op.bindings = bindings;
  return op;
}

Status lower_error(HostDevice& device, std::span<const Operation> run) {
  auto region = device.lower(devices::RegionRequest::of(run));
  REQUIRE_FALSE(region.ok());
  return std::move(region).status();
}

}  // namespace

TEST_CASE("fill, copy and kernel tasks run in order in one region", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const builtin::KernelSpec spec = builtin::add_f32(4);
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  REQUIRE(code.ok());
  auto a = allocate(device, 16), b = allocate(device, 16), out = allocate(device, 16);

  // a = bytes 0x01 (each f32 = 0x01010101), b = copy of a, out = a + b.
  // Out of order, the copy would read zeros, or the kernel would add zeros.
  const OperationBinding fill_a[] = {bind(*a, Access::Write)};
  const OperationBinding copy_a_to_b[] = {bind(*b, Access::Write), bind(*a, Access::Read)};
  const OperationBinding add[] = {bind(*a, Access::Read), bind(*b, Access::Read), bind(*out, Access::Write)};
  const Operation ops[] = {fill_op(fill_a, 0x01), copy_op(copy_a_to_b), kernel_op(**code, add)};

  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  float one_pattern;
  const std::uint32_t bits = 0x01010101u;
  std::memcpy(&one_pattern, &bits, sizeof(bits));
  CHECK(read_floats(*b, 4) == std::vector<float>(4, one_pattern));
  CHECK(read_floats(*out, 4) == std::vector<float>(4, one_pattern + one_pattern));
}

TEST_CASE("fill and copy honour binding offsets and lengths", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto m = allocate(device, 64);
  const OperationBinding fill[] = {bind(*m, Access::Write, 8, 4)};
  const OperationBinding copy[] = {bind(*m, Access::Write, 32, 8), bind(*m, Access::Read, 6, 8)};
  const Operation ops[] = {fill_op(fill, 0xAB), copy_op(copy)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  const auto* bytes = reinterpret_cast<const unsigned char*>(m->host_address());
  const std::vector<unsigned char> filled(bytes, bytes + 16);
  CHECK(filled == std::vector<unsigned char>{0, 0, 0, 0, 0, 0, 0, 0, 0xAB, 0xAB, 0xAB, 0xAB, 0, 0, 0, 0});
  const std::vector<unsigned char> copied(bytes + 32, bytes + 40);
  CHECK(copied == std::vector<unsigned char>{0, 0, 0xAB, 0xAB, 0xAB, 0xAB, 0, 0});
}

TEST_CASE("a region stops at the first failing kernel and reports it once", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  KernelContract contract;
  contract.bindings = {{4, 4, Access::ReadWrite, "state"}};
  auto fail = device.load({CodeImage::Kind::Plugin, "test.fail", ACCORD_TEST_PLUGIN_PATH}, contract);
  REQUIRE(fail.ok());
  auto state = allocate(device, 4), later = allocate(device, 4);
  const OperationBinding fail_bindings[] = {bind(*state, Access::ReadWrite)};
  const OperationBinding fill_later[] = {bind(*later, Access::Write)};
  const Operation ops[] = {kernel_op(**fail, fail_bindings), fill_op(fill_later, 0xFF)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.errors == 1);
  CHECK(sink.status.kind() == ErrorKind::Execution);
  CHECK(later->host_address()[0] == std::byte{0});  // skipped
}

TEST_CASE("lower refuses a binding outside its memory, naming the op", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto m = allocate(device, 16);
  const OperationBinding ok_fill[] = {bind(*m, Access::Write)};
  const OperationBinding bad_fill[] = {bind(*m, Access::Write, 12, 8)};
  const Operation ops[] = {fill_op(ok_fill, 0), fill_op(bad_fill, 0)};
  const Status error = lower_error(device, ops);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("op 1") && Catch::Contains("binding 0"));

  // An offset far past the end must not wrap around in the bounds check.
  const OperationBinding wrapping[] = {bind(*m, Access::Write, static_cast<std::size_t>(-8), 16)};
  const Operation wrap_ops[] = {fill_op(wrapping, 0)};
  CHECK(lower_error(device, wrap_ops).kind() == ErrorKind::Invalid);
}

TEST_CASE("lower refuses malformed copies", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto a = allocate(device, 64), b = allocate(device, 64);
  SECTION("unequal lengths") {
    const OperationBinding copy[] = {bind(*a, Access::Write, 0, 8), bind(*b, Access::Read, 0, 16)};
    const Operation ops[] = {copy_op(copy)};
    const Status error = lower_error(device, ops);
    CHECK(error.kind() == ErrorKind::Invalid);
    CHECK_THAT(std::string(error.message()), Catch::Contains("op 0") && Catch::Contains("length"));
  }
  SECTION("overlapping ranges of one memory") {
    const OperationBinding copy[] = {bind(*a, Access::Write, 0, 16), bind(*a, Access::Read, 8, 16)};
    const Operation ops[] = {copy_op(copy)};
    CHECK_THAT(std::string(lower_error(device, ops).message()), Catch::Contains("overlap"));
  }
  SECTION("one binding") {
    const OperationBinding copy[] = {bind(*a, Access::Write)};
    const Operation ops[] = {copy_op(copy)};
    CHECK(lower_error(device, ops).kind() == ErrorKind::Invalid);
  }
  SECTION("a read-only destination") {
    const OperationBinding copy[] = {bind(*a, Access::Read), bind(*b, Access::Read)};
    const Operation ops[] = {copy_op(copy)};
    CHECK_THAT(std::string(lower_error(device, ops).message()), Catch::Contains("binding 0"));
  }
}

TEST_CASE("lower refuses kernel ops without code or with bindings their contract rejects", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const builtin::KernelSpec spec = builtin::relu_f32(4);
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  REQUIRE(code.ok());
  auto in = allocate(device, 64), out = allocate(device, 64);

  SECTION("no code") {
    const OperationBinding bindings[] = {bind(*in, Access::Read), bind(*out, Access::Write)};
    Operation op = kernel_op(**code, bindings);
    op.code = nullptr;
    const Operation ops[] = {op};
    CHECK_THAT(std::string(lower_error(device, ops).message()), Catch::Contains("op 0") && Catch::Contains("code"));
  }
  SECTION("a view shorter than the contract") {
    const OperationBinding bindings[] = {bind(*in, Access::Read, 0, 8), bind(*out, Access::Write)};
    const Operation ops[] = {kernel_op(**code, bindings)};
    CHECK_THAT(std::string(lower_error(device, ops).message()),
               Catch::Contains("accord.relu_f32") && Catch::Contains("binding 0"));
  }
  SECTION("a misaligned offset") {
    const OperationBinding bindings[] = {bind(*in, Access::Read), bind(*out, Access::Write, 2, 16)};
    const Operation ops[] = {kernel_op(**code, bindings)};
    CHECK_THAT(std::string(lower_error(device, ops).message()), Catch::Contains("binding 1"));
  }
  SECTION("an access narrower than the contract's") {
    const OperationBinding bindings[] = {bind(*in, Access::Read), bind(*out, Access::Read)};
    const Operation ops[] = {kernel_op(**code, bindings)};
    CHECK_THAT(std::string(lower_error(device, ops).message()), Catch::Contains("binding 1"));
  }
  SECTION("the wrong number of bindings") {
    const OperationBinding bindings[] = {bind(*in, Access::Read)};
    const Operation ops[] = {kernel_op(**code, bindings)};
    CHECK(lower_error(device, ops).kind() == ErrorKind::Invalid);
  }
}

TEST_CASE("lower refuses runs on lanes the host device lacks or mixing lanes", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto m = allocate(device, 16);
  const OperationBinding fill[] = {bind(*m, Access::Write)};
  Operation npu = fill_op(fill, 0);
  npu.lane = LaneKind::Npu;
  const Operation npu_ops[] = {npu};
  CHECK(lower_error(device, npu_ops).kind() == ErrorKind::Invalid);

  Operation upload = fill_op(fill, 0);
  upload.lane = LaneKind::Upload;
  const Operation mixed[] = {fill_op(fill, 0), upload};
  CHECK_THAT(std::string(lower_error(device, mixed).message()), Catch::Contains("op 1"));
}

TEST_CASE("launching a lowered region performs no heap allocation", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const builtin::KernelSpec spec = builtin::saxpy_f32(256, 0.5f);
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  REQUIRE(code.ok());
  auto x = allocate(device, 1024), y = allocate(device, 1024);
  const OperationBinding bindings[] = {bind(*x, Access::Read), bind(*y, Access::ReadWrite)};
  const Operation ops[] = {kernel_op(**code, bindings)};
  auto region = device.lower(devices::RegionRequest::of(ops));
  REQUIRE(region.ok());

  // Sanity check of the counter itself, so a broken replacement cannot pass silently.
  CHECK(allocations_during([] { ::operator delete(::operator new(16)); }) == 1);

  RecordingSink sink;
  const std::size_t allocations = allocations_during([&] { device.launch(**region, RegionWaits{}, sink); });
  CHECK(sink.done == 1);
  CHECK(allocations == 0);
}
