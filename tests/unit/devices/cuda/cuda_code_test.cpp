// Loading GPU code on a real GPU (cuda_code.cpp): PTX is JIT-compiled, a cubin or fatbin
// for another architecture is refused naming both targets, the parameter layout is
// checked against the contract naming the parameter, unknown kernels and non-GPU images
// are Unsupported. Tagged [gpu].
#include <cstring>
#include <string>

#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

KernelContract add_contract(std::uint32_t count) {
  KernelContract c;
  const std::size_t bytes = count * sizeof(float);
  c.bindings = {{bytes, 4, Access::Read, "a"}, {bytes, 4, Access::Read, "b"}, {bytes, 4, Access::Write, "out"}};
  append_constant(c.constants, count);
  return c;
}

std::string message_of(const Result<std::unique_ptr<LoadedCode>>& r) { return std::string(r.status().message()); }

TEST_CASE("PTX is compiled for the GPU and keeps its name and contract", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  const auto code = device.load(gpu_image(ptx, "accord_test_add_f32", 64), add_contract(64));
  INFO(code.status().to_string());
  REQUIRE(code.ok());
  CHECK(code.value()->name() == "accord_test_add_f32");
  CHECK(code.value()->contract().constants.size() == 4);
}

TEST_CASE("a cubin for another architecture is Invalid, naming both targets", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(cubin, "kernels_sm80.cubin");
  if (cubin_runs_on(80, device.sm())) {
    WARN("skipped: this " << sm_name(device.sm()) << " GPU runs sm_80 code, so the cubin is not for another target");
    return;
  }
  const auto code = device.load(gpu_image(cubin, "accord_test_add_f32", 64), add_contract(64));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Invalid);
  CHECK(message_of(code).find("sm_80") != std::string::npos);
  CHECK(message_of(code).find(sm_name(device.sm())) != std::string::npos);
}

TEST_CASE("a fatbin runs through its PTX when it has no code for the GPU", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(with_ptx, "kernels_sm80_ptx75.fatbin");
  ACCORD_CUDA_TEST_KERNELS(code_only, "kernels_sm80_only.fatbin");
  const auto loaded = device.load(gpu_image(with_ptx, "accord_test_add_f32", 64), add_contract(64));
  INFO(loaded.status().to_string());
  CHECK(loaded.ok());
  if (cubin_runs_on(80, device.sm())) return;
  const auto refused = device.load(gpu_image(code_only, "accord_test_add_f32", 64), add_contract(64));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Invalid);
  CHECK(message_of(refused).find("sm_80 code") != std::string::npos);
  CHECK(message_of(refused).find(sm_name(device.sm())) != std::string::npos);
}

TEST_CASE("a contract that differs from the parameter layout is Invalid, naming the parameter", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  const CodeImage image = gpu_image(ptx, "accord_test_add_f32", 64);
  SECTION("a binding too many: the constant parameter is no pointer") {
    KernelContract c = add_contract(64);
    c.bindings.push_back({4, 4, Access::Read, "extra"});
    c.constants.clear();
    const auto code = device.load(image, c);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK(message_of(code).find("parameter 3") != std::string::npos);
    CHECK(message_of(code).find("accord_test_add_f32") != std::string::npos);
  }
  SECTION("a missing constant") {
    KernelContract c = add_contract(64);
    c.constants.clear();
    const auto code = device.load(image, c);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK(message_of(code).find("parameter 3") != std::string::npos);
  }
  SECTION("constant bytes too many") {
    KernelContract c = add_contract(64);
    append_constant(c.constants, std::uint32_t{1});
    const auto code = device.load(image, c);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK(message_of(code).find("accord_test_add_f32") != std::string::npos);
  }
  SECTION("a binding too few") {
    KernelContract c = add_contract(64);
    c.bindings.pop_back();
    const auto code = device.load(image, c);
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
    CHECK(message_of(code).find("parameter 2") != std::string::npos);
  }
}

TEST_CASE("an unknown kernel or a non-GPU image is Unsupported", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  const auto unknown = device.load(gpu_image(ptx, "accord_test_no_such_kernel"), add_contract(4));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().kind() == ErrorKind::Unsupported);
  CodeImage builtin;
  builtin.name = "accord.add_f32";
  const auto refused = device.load(builtin, add_contract(4));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Unsupported);
}

TEST_CASE("broken PTX is Invalid with the JIT's log", "[cuda][gpu][code]") {
  ACCORD_CUDA_TEST_GPU(device);
  const std::string text = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry broken() { bogus; }\n";
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  const auto code = device.load(gpu_image(bytes, "broken"), KernelContract{});
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Invalid);
  CHECK(message_of(code).find("JIT log") != std::string::npos);
}

}  // namespace
}  // namespace accord::devices::cuda
