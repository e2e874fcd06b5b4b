// The CUDA device on a real GPU: identity, GpuLocal memory (granularity-rounded, zeroed,
// exportable) and admission of host pages. Tagged [gpu]: skips without a driver or GPU.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>

#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

// "sm_90": "sm_" and one or more digits. (No <regex>: g++ 12 reports a false
// maybe-uninitialized inside it in the sanitizer builds.)
bool is_sm_target(std::string_view target) {
  return target.size() > 3 && target.starts_with("sm_") &&
         std::all_of(target.begin() + 3, target.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "GPU-" then lower-case hex in groups of 8-4-4-4-12, as nvidia-smi prints UUIDs.
bool is_gpu_uuid(std::string_view uuid) {
  if (!uuid.starts_with("GPU-")) return false;
  uuid.remove_prefix(4);
  for (std::size_t group : {8, 4, 4, 4, 12}) {
    if (uuid.size() < group) return false;
    for (std::size_t i = 0; i < group; ++i)
      if (!std::isxdigit(static_cast<unsigned char>(uuid[i])) || std::isupper(static_cast<unsigned char>(uuid[i])))
        return false;
    uuid.remove_prefix(group);
    if (group != 12) {
      if (uuid.empty() || uuid.front() != '-') return false;
      uuid.remove_prefix(1);
    }
  }
  return uuid.empty();
}

TEST_CASE("a CUDA device names its GPU, target and memory", "[cuda][gpu][identity]") {
  ACCORD_CUDA_TEST_GPU(device);
  const DeviceInfo& info = device.info();
  CHECK(info.kind == DeviceKind::Gpu);
  CHECK(info.ordinal == 0);
  CHECK(info.backend == "cuda");
  CHECK(info.name.starts_with("cuda:0 ("));
  CHECK(info.name.ends_with(")"));
  CHECK(is_sm_target(info.target));
  CHECK(info.target == sm_name(device.sm()));
  CHECK(info.memory_bytes > 0);
  CHECK(is_gpu_uuid(device.uuid()));
  const auto free = device.free_memory_bytes();
  REQUIRE(free.ok());
  CHECK(*free <= info.memory_bytes);
  CHECK(device.waits_natively());
  CHECK_FALSE(device.launches_synchronously());
  CHECK(device.lanes().size() == 3);
  CHECK(device.supports(MemoryPlacement::gpu_local(0)));
  CHECK_FALSE(device.supports(MemoryPlacement::gpu_local(1)));
  CHECK_FALSE(device.supports(MemoryPlacement::host_visible()));
}

TEST_CASE("GpuLocal memory is rounded to the granularity and zeroed", "[cuda][gpu][memory]") {
  ACCORD_CUDA_TEST_GPU(device);
  INFO("granularity " << device.granularity());
  REQUIRE(device.granularity() > 0);
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4097}, device.granularity(), device.granularity() + 1}) {
    INFO(bytes << " bytes");
    auto memory = device.allocate({bytes, MemoryPlacement::gpu_local(0)});
    REQUIRE(memory.ok());
    const DeviceMemory& m = *memory.value();
    CHECK(m.bytes() >= bytes);
    CHECK(m.bytes() % device.granularity() == 0);
    CHECK(m.bytes() < bytes + device.granularity());
    CHECK(m.host_address() == nullptr);
    CHECK(m.device_address() != 0);
    const std::vector<std::uint8_t> back = read_back(device, m);
    CHECK(std::all_of(back.begin(), back.end(), [](std::uint8_t b) { return b == 0; }));
  }
}

TEST_CASE("GpuLocal memory is refused at 0 bytes and for other placements", "[cuda][gpu][memory]") {
  ACCORD_CUDA_TEST_GPU(device);
  const auto zero = device.allocate({0, MemoryPlacement::gpu_local(0)});
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().kind() == ErrorKind::Invalid);
  const auto host = device.allocate({64, MemoryPlacement::host_visible()});
  REQUIRE_FALSE(host.ok());
  CHECK(host.status().kind() == ErrorKind::Unsupported);
}

TEST_CASE("GpuLocal memory exports one stable POSIX fd", "[cuda][gpu][memory][export]") {
  ACCORD_CUDA_TEST_GPU(device);
  auto memory = device.allocate({4096, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const int fd = memory.value()->export_fd();
  CHECK(fd >= 0);
  CHECK(memory.value()->export_fd() == fd);
}

TEST_CASE("host pages are registered and written by the GPU", "[cuda][gpu][admission]") {
  ACCORD_CUDA_TEST_GPU(device);
  HostPages pages(8192);
  auto admission = device.admit(pages, host_info());
  INFO(admission.status().to_string());
  REQUIRE(admission.ok());
  CHECK(admission.value()->device_address() != 0);
  const OperationBinding binding = bind_admitted(pages, *admission.value(), Access::Write, 100, 50);
  const Operation fill = fill_op(LaneKind::Upload, binding, 0x5A);
  const auto region = lower(device, std::span<const Operation>(&fill, 1));
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  REQUIRE(sink.done() == 1);
  const auto* p = pages.as<const std::uint8_t>();
  CHECK(p[99] == 0);
  CHECK(p[100] == 0x5A);
  CHECK(p[149] == 0x5A);
  CHECK(p[150] == 0);
}

// Memory of a GPU that is no CUDA device of this process: cuda_peer_admission_test.cpp
// ("... is Unsupported, naming its home"), on the stand-in driver, which runs everywhere.

}  // namespace
}  // namespace accord::devices::cuda
