// Two GPUs in one process on real hardware: host pages admitted to both and written by
// both, and a copy GpuLocal(0) -> GpuLocal(1) lowered on GPU 1 through a peer admission,
// checked byte for byte. Tagged [gpu]; skips without a GPU, and with fewer than two says
// "needs two CUDA GPUs, found N" (the H200 machine has one: these wait for a bigger box).
#include <algorithm>
#include <array>

#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

// Opens every GPU into `var` (a std::vector<std::unique_ptr<CudaDevice>>&) or skips the
// test: without a GPU, or with fewer than two.
#define ACCORD_CUDA_TEST_TWO_GPUS(var)                                                      \
  auto var##_opened_ = open_gpus();                                                         \
  if (!var##_opened_.ok()) {                                                                \
    WARN("skipped: no CUDA GPU here: " << var##_opened_.status().message());                \
    return;                                                                                 \
  }                                                                                         \
  auto& var = var##_opened_.value();                                                        \
  if (var.size() < 2) {                                                                     \
    WARN("skipped: needs two CUDA GPUs, found " << var.size());                             \
    return;                                                                                 \
  }

TEST_CASE("host pages admitted to two GPUs are written and read by both", "[cuda][gpu][two_gpus][admission]") {
  ACCORD_CUDA_TEST_TWO_GPUS(gpus);
  CudaDevice& gpu0 = *gpus[0];
  CudaDevice& gpu1 = *gpus[1];
  HostPages pages(8192);
  auto on0 = gpu0.admit(pages, host_info());
  INFO(on0.status().to_string());
  REQUIRE(on0.ok());
  auto on1 = gpu1.admit(pages, host_info());
  INFO(on1.status().to_string());
  REQUIRE(on1.ok());

  RecordingSink sink;
  const OperationBinding first = bind_admitted(pages, *on0.value(), Access::Write, 0, 100);
  const Operation fill0 = fill_op(LaneKind::Upload, first, 0x11);
  launch_and_wait(gpu0, *lower(gpu0, std::span<const Operation>(&fill0, 1)), sink);
  const OperationBinding second = bind_admitted(pages, *on1.value(), Access::Write, 100, 100);
  const Operation fill1 = fill_op(LaneKind::Upload, second, 0x22);
  launch_and_wait(gpu1, *lower(gpu1, std::span<const Operation>(&fill1, 1)), sink);
  // GPU 1 reads what GPU 0 wrote: [0, 200) copied to [4096, 4296) on GPU 1.
  const std::array bindings{bind_admitted(pages, *on1.value(), Access::Write, 4096, 200),
                            bind_admitted(pages, *on1.value(), Access::Read, 0, 200)};
  const Operation copy = copy_op(LaneKind::Upload, bindings);
  launch_and_wait(gpu1, *lower(gpu1, std::span<const Operation>(&copy, 1)), sink);
  INFO(sink.last_error().to_string());
  REQUIRE(sink.done() == 3);

  const auto* p = pages.as<const std::uint8_t>();
  for (std::size_t base : {std::size_t{0}, std::size_t{4096}}) {
    INFO("from byte " << base);
    CHECK(std::all_of(p + base, p + base + 100, [](std::uint8_t b) { return b == 0x11; }));
    CHECK(std::all_of(p + base + 100, p + base + 200, [](std::uint8_t b) { return b == 0x22; }));
    CHECK(p[base + 200] == 0);
  }
}

TEST_CASE("a copy from GPU 0's memory to GPU 1's runs on GPU 1 through peer access, byte for byte",
          "[cuda][gpu][two_gpus][peer]") {
  ACCORD_CUDA_TEST_TWO_GPUS(gpus);
  CudaDevice& gpu0 = *gpus[0];
  CudaDevice& gpu1 = *gpus[1];
  auto source = gpu0.allocate({1 << 20, MemoryPlacement::gpu_local(0)});
  REQUIRE(source.ok());
  auto target = gpu1.allocate({1 << 20, MemoryPlacement::gpu_local(1)});
  REQUIRE(target.ok());
  const DeviceMemory& m0 = *source.value();
  const DeviceMemory& m1 = *target.value();

  // A pattern on GPU 0: three fills of different values and lengths, the rest zero.
  const std::array pattern{bind(m0, Access::Write, 0, 4096), bind(m0, Access::Write, 4096, 61440),
                           bind(m0, Access::Write, 65536, 123)};
  const std::array fills{fill_op(LaneKind::Compute, pattern[0], 0x01), fill_op(LaneKind::Compute, pattern[1], 0x7E),
                         fill_op(LaneKind::Compute, pattern[2], 0xC3)};
  RecordingSink sink;
  launch_and_wait(gpu0, *lower(gpu0, fills), sink);
  REQUIRE(sink.done() == 1);

  auto peer = gpu1.admit(m0, gpu0.info());
  if (!peer.ok() && peer.status().kind() == ErrorKind::Unsupported) {
    WARN("skipped: " << peer.status().message());
    return;
  }
  INFO(peer.status().to_string());
  REQUIRE(peer.ok());
  CHECK(peer.value()->device_address() == m0.device_address());

  // The whole of GPU 0's memory into GPU 1's from byte 8192 on, lowered on GPU 1.
  const std::size_t length = m0.bytes() - 8192;
  const std::array bindings{bind(m1, Access::Write, 8192, length), bind_admitted(m0, *peer.value(), Access::Read, 0, length)};
  const Operation copy = copy_op(LaneKind::Compute, bindings);
  launch_and_wait(gpu1, *lower(gpu1, std::span<const Operation>(&copy, 1)), sink);
  INFO(sink.last_error().to_string());
  REQUIRE(sink.done() == 2);

  const std::vector<std::uint8_t> expected = read_back(gpu0, m0);
  const std::vector<std::uint8_t> got = read_back(gpu1, m1);
  CHECK(expected[0] == 0x01);
  CHECK(expected[4096] == 0x7E);
  CHECK(expected[65536 + 122] == 0xC3);
  CHECK(std::all_of(got.begin(), got.begin() + 8192, [](std::uint8_t b) { return b == 0; }));
  CHECK(std::equal(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(length), got.begin() + 8192));
}

}  // namespace
}  // namespace accord::devices::cuda
