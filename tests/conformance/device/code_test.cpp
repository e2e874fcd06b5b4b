// Code: loading checks a kernel against its contract. Loaded code keeps its name and
// contract; a contract that does not match the kernel is Invalid naming it; a kernel
// the device does not know is Unsupported. Running code is in launch_test.cpp.
#include "accord/builtin_kernels.h"
#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("loaded code keeps its name and contract", "[code]") {
  const builtin::KernelSpec spec = builtin::add_f32(16);
  const std::unique_ptr<LoadedCode> code = load(device, device_backend().code.add_f32, "add_f32", spec.contract);
  CHECK(code->name() == device_backend().code.add_f32->name);
  CHECK(code->contract().bindings.size() == spec.contract.bindings.size());
  CHECK(code->contract().constants == spec.contract.constants);
}

DEVICE_TEST_CASE("a contract that does not match its kernel is Invalid, naming the kernel", "[code]") {
  const std::optional<CodeImage>& add = device_backend().code.add_f32;
  // The matching contract loads, so the failures below are the contract's.
  static_cast<void>(load(device, add, "add_f32", builtin::add_f32(16).contract));
  CodeImage image = *add;
  image.device = device.info().id();

  KernelContract missing = builtin::add_f32(16).contract;
  missing.bindings.pop_back();
  INFO("a contract with 2 of the kernel's 3 bindings");
  CHECK_STATUS(device.load(image, missing), FailsWith(ErrorKind::Invalid, {image.name}));

  KernelContract wrong_access = builtin::add_f32(16).contract;
  wrong_access.bindings[2].access = Access::Read;
  INFO("a contract declaring the kernel's output Read");
  CHECK_STATUS(device.load(image, wrong_access), FailsWith(ErrorKind::Invalid, {image.name}));

  KernelContract extra_constants = builtin::add_f32(16).contract;
  append_constant(extra_constants.constants, std::uint32_t{1});
  INFO("a contract with 4 bytes of constants too many");
  CHECK_STATUS(device.load(image, extra_constants), FailsWith(ErrorKind::Invalid, {image.name}));
}

DEVICE_TEST_CASE("an unknown kernel is Unsupported", "[code]") {
  CodeImage image;
  image.kind = CodeImage::Kind::Builtin;
  image.device = device.info().id();
  image.name = "conformance.no_such_kernel";
  CHECK_STATUS(device.load(image, one_binding_contract()), FailsWith(ErrorKind::Unsupported));
}

}  // namespace
}  // namespace accord::devices::conformance
