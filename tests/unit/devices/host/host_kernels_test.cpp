// Built-in kernels: each computes the right result through load + lower + launch on a
// HostDevice, and load refuses contracts that do not match the kernel (Invalid naming
// the kernel and binding). Plugin kernels share the check; see host_plugin_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "accord/builtin_kernels.h"
#include "daemon/devices/host/host_kernels.h"
#include "host_test_support.h"

using namespace accord;
using namespace accord::devices;
using namespace accord::devices::host;
using namespace accord::devices::host::testing;

namespace {

std::unique_ptr<LoadedCode> load_builtin(HostDevice& device, const builtin::KernelSpec& spec) {
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  INFO(code.status().to_string());
  REQUIRE(code.ok());
  return std::move(code).value();
}

Status load_error(const builtin::KernelSpec& spec) {
  HostDevice device{HostDeviceOptions{}};
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  REQUIRE_FALSE(code.ok());
  return std::move(code).status();
}

}  // namespace

TEST_CASE("accord.add_f32 adds element-wise", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_builtin(device, builtin::add_f32(5));
  auto a = allocate(device, 20), b = allocate(device, 20), out = allocate(device, 20);
  write_floats(*a, {1, 2, 3, 4, 5});
  write_floats(*b, {10, 20, 30, 40, -5});
  const OperationBinding bindings[] = {bind(*a, Access::Read), bind(*b, Access::Read), bind(*out, Access::Write)};
  const Operation ops[] = {kernel_op(*code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  CHECK(read_floats(*out, 5) == std::vector<float>{11, 22, 33, 44, 0});
}

TEST_CASE("accord.saxpy_f32 computes y = a*x + y", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_builtin(device, builtin::saxpy_f32(4, 2.5f));
  auto x = allocate(device, 16), y = allocate(device, 16);
  write_floats(*x, {1, 2, 3, 4});
  write_floats(*y, {1, 1, 1, -10});
  const OperationBinding bindings[] = {bind(*x, Access::Read), bind(*y, Access::ReadWrite)};
  const Operation ops[] = {kernel_op(*code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  CHECK(read_floats(*y, 4) == std::vector<float>{3.5f, 6, 8.5f, 0});
}

TEST_CASE("accord.matmul_f32 multiplies row-major matrices and overwrites C", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_builtin(device, builtin::matmul_f32(2, 3, 2));
  auto a = allocate(device, 2 * 3 * 4), b = allocate(device, 3 * 2 * 4), c = allocate(device, 2 * 2 * 4);
  write_floats(*a, {1, 2, 3, 4, 5, 6});        // 2x3
  write_floats(*b, {7, 8, 9, 10, 11, 12});     // 3x2
  write_floats(*c, {-1, -1, -1, -1});          // stale contents must not leak in
  const OperationBinding bindings[] = {bind(*a, Access::Read), bind(*b, Access::Read), bind(*c, Access::Write)};
  const Operation ops[] = {kernel_op(*code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  CHECK(read_floats(*c, 4) == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("accord.relu_f32 clamps negatives to zero", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_builtin(device, builtin::relu_f32(4));
  auto in = allocate(device, 16), out = allocate(device, 16);
  write_floats(*in, {-2, 0, 3.5f, std::numeric_limits<float>::quiet_NaN()});
  const OperationBinding bindings[] = {bind(*in, Access::Read), bind(*out, Access::Write)};
  const Operation ops[] = {kernel_op(*code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  CHECK(read_floats(*out, 4) == std::vector<float>{0, 0, 3.5f, 0});
}

TEST_CASE("built-in specs match the kernel table", "[devices][host]") {
  for (const builtin::KernelSpec& spec :
       {builtin::add_f32(8), builtin::saxpy_f32(8, 1.0f), builtin::matmul_f32(2, 4, 8), builtin::relu_f32(8)}) {
    const BuiltinKernel* kernel = find_builtin_kernel(spec.name);
    REQUIRE(kernel != nullptr);
    CHECK(check_kernel_contract(kernel->abi, spec.contract).ok());
    CHECK(kernel->check_contract(spec.contract).ok());
  }
  CHECK(builtin_kernels().size() == 4);
  CHECK(find_builtin_kernel("accord.nope") == nullptr);
}

TEST_CASE("a contract with the wrong binding count is Invalid at load", "[devices][host]") {
  builtin::KernelSpec spec = builtin::add_f32(4);
  spec.contract.bindings.pop_back();
  const Status error = load_error(spec);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("accord.add_f32") && Catch::Contains("3 bindings"));
}

TEST_CASE("a contract with the wrong access is Invalid at load", "[devices][host]") {
  builtin::KernelSpec spec = builtin::saxpy_f32(4, 1.0f);
  spec.contract.bindings[1].access = Access::Write;  // y is read too
  const Status error = load_error(spec);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()),
             Catch::Contains("accord.saxpy_f32") && Catch::Contains("binding 1") && Catch::Contains("ReadWrite"));
}

TEST_CASE("a contract whose bytes do not cover the constants' count is Invalid at load", "[devices][host]") {
  builtin::KernelSpec add = builtin::add_f32(100);
  add.contract.bindings[2].bytes = 396;
  Status error = load_error(add);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()),
             Catch::Contains("accord.add_f32") && Catch::Contains("binding 2") && Catch::Contains("400"));

  builtin::KernelSpec matmul = builtin::matmul_f32(4, 5, 6);
  matmul.contract.bindings[1].bytes = 4 * 5 * 4;  // B is KxN = 5x6
  error = load_error(matmul);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("binding 1") && Catch::Contains("120"));
}

TEST_CASE("a contract with the wrong constants size is Invalid at load", "[devices][host]") {
  builtin::KernelSpec spec = builtin::relu_f32(4);
  append_constant(spec.contract.constants, std::uint32_t{0});
  const Status error = load_error(spec);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("accord.relu_f32") && Catch::Contains("constants"));
}

TEST_CASE("a contract alignment that is not a multiple of 4 is Invalid at load", "[devices][host]") {
  builtin::KernelSpec spec = builtin::matmul_f32(2, 2, 2);
  spec.contract.bindings[0].alignment = 2;
  Status error = load_error(spec);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("binding 0") && Catch::Contains("alignment"));

  spec.contract.bindings[0].alignment = 16;  // a stricter multiple is fine
  HostDevice device{HostDeviceOptions{}};
  CHECK(device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract).ok());
}

TEST_CASE("a structurally invalid contract is Invalid at load", "[devices][host]") {
  builtin::KernelSpec spec = builtin::add_f32(0);  // zero-byte bindings
  const Status error = load_error(spec);
  CHECK(error.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(error.message()), Catch::Contains("accord.add_f32"));
}
