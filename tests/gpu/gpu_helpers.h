// Shared helpers of the [gpu] suite: a runtime whose gpu:0 is present (or the reason
// to skip), the kernels nvcc built into this executable, and f32 contracts. Public API
// only, so the suite runs over both transports like the conformance suite.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tests/conformance/conformance_helpers.h"

extern const unsigned char accord_gpu_test_ptx[];
extern const unsigned long accord_gpu_test_ptx_size;
extern const unsigned char accord_gpu_test_sm80[];
extern const unsigned long accord_gpu_test_sm80_size;
extern const unsigned char accord_gpu_test_sm90[];
extern const unsigned long accord_gpu_test_sm90_size;

namespace accord::gpu_test {

struct GpuRuntime {
  std::optional<Runtime> runtime;
  DeviceInfo gpu;
  std::string skip;  // why there is no usable GPU; empty when `runtime` is set
};

// A runtime of this executable's transport with `options`, when gpu:0 is present and
// the kernels were built; otherwise the reason.
inline GpuRuntime gpu_runtime(const RuntimeOptions& options = {}) {
  GpuRuntime out;
  auto rt = make_conformance_runtime(options);
  if (!rt.ok()) {
    out.skip = "no " + std::string(conformance_transport_name()) + " runtime: " + rt.status().to_string();
    return out;
  }
  auto gpu = rt->gpu(0);
  if (!gpu.ok()) {
    out.skip = "no GPU here: " + std::string(gpu.status().message());
    return out;
  }
  if (gpu->state != DeviceState::Present) {
    out.skip = "gpu:0 is lost (an earlier fault case in this process?): " + gpu->reason;
    return out;
  }
  if (accord_gpu_test_ptx_size == 0) {
    out.skip = "nvcc was not found when the [gpu] tests were built";
    return out;
  }
  out.gpu = std::move(gpu).value();
  out.runtime = std::move(rt).value();
  return out;
}

// Declares `var` (an accord::Runtime&) or ends the test case with a WARN saying why.
#define GPU_RUNTIME_OR_SKIP(var, ...)                                  \
  auto var##_gpu = ::accord::gpu_test::gpu_runtime(__VA_ARGS__);       \
  if (!var##_gpu.runtime) {                                            \
    WARN("skipped: " << var##_gpu.skip);                               \
    return;                                                            \
  }                                                                    \
  ::accord::Runtime& var = *var##_gpu.runtime

inline std::vector<std::byte> embedded_bytes(const unsigned char* data, unsigned long size, bool text) {
  std::vector<std::byte> out(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  if (text) out.push_back(std::byte{0});  // PTX: NUL-terminated text
  return out;
}

inline constexpr std::uint32_t kBlock = 256;

// The add_f32 kernel from PTX, over `count` floats.
inline GpuKernelImage add_f32_image(std::uint32_t count) {
  GpuKernelImage image;
  image.image = embedded_bytes(accord_gpu_test_ptx, accord_gpu_test_ptx_size, true);
  image.entry = "accord_gpu_add_f32";
  image.grid = {(count + kBlock - 1) / kBlock, 1, 1};
  image.block = {kBlock, 1, 1};
  return image;
}

inline KernelContract add_f32_contract(std::uint32_t count) {
  const std::size_t bytes = std::size_t{count} * sizeof(float);
  KernelContract contract;
  contract.bindings = {{bytes, 4, Access::Read, "f32 a"}, {bytes, 4, Access::Read, "f32 b"},
                       {bytes, 4, Access::Write, "f32 out"}};
  append_constant(contract.constants, count);
  return contract;
}

inline Buffer gpu_buffer(const Runtime& runtime, std::size_t bytes, int gpu = 0) {
  auto buffer = runtime.allocate(bytes, MemoryPlacement::gpu_local(gpu));
  INFO("allocating " << bytes << " bytes on gpu:" << gpu);
  REQUIRE_OK(buffer);
  return std::move(buffer).value();
}

// Runs `graph` once and REQUIREs success.
inline void run_ok(Graph graph) {
  auto exe = std::move(graph).prepare();
  REQUIRE_OK(exe);
  auto done = exe->submit();
  REQUIRE_OK(done);
  REQUIRE_OK(done->wait());
}

}  // namespace accord::gpu_test
