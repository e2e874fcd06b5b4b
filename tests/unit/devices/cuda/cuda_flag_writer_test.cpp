// The two ways a region's graph writes its completion flag (cuda.flag_write: the built-in
// flag kernel, the default, or a stream memory operation), on a real GPU: each is what the
// device reports using, a kernel's writes to host pages are visible by the time its
// launch is reported, and a successor on another lane still waits on the flag. Tagged [gpu].
#include <array>
#include <atomic>
#include <cstring>

#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

constexpr std::uint32_t kMarker = 0x5EE9D0E5u;

std::unique_ptr<LoadedCode> load_or_fail(CudaDevice& device, const CodeImage& image, const KernelContract& contract) {
  auto code = device.load(image, contract);
  INFO("load " << image.name << ": " << code.status().to_string());
  REQUIRE(code.ok());
  return std::move(code).value();
}

const char* name_of(CudaFlagWriter writer) { return writer == CudaFlagWriter::Kernel ? "kernel" : "memory_op"; }

TEST_CASE("each flag writer is the one used, and a kernel's host writes are visible when its launch is reported",
          "[cuda][gpu][flags]") {
  for (const CudaFlagWriter writer : {CudaFlagWriter::Kernel, CudaFlagWriter::MemoryOp}) {
    DYNAMIC_SECTION("cuda.flag_write = " << name_of(writer)) {
      CudaDeviceOptions options;
      options.flag_write = writer;
      auto opened = open_gpu(options);
      if (!opened.ok()) {
        WARN("skipped: no CUDA GPU here: " << opened.status().message());
        return;
      }
      CudaDevice& device = *opened.value();
      ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
      REQUIRE(device.flag_writer().has_value());
      CHECK(*device.flag_writer() == writer);
      // The kernel stores straight into registered host pages; the test reads them the
      // moment the launch is reported, with no synchronisation of its own: the tail's
      // system-scope fence is all that orders the store before the flag.
      KernelContract store;
      store.bindings = {{4, 4, Access::Write, "out u32"}};
      append_constant(store.constants, kMarker);
      append_constant(store.constants, std::uint32_t{0});
      const auto storer = load_or_fail(device, gpu_image(ptx, "accord_test_store_u32"), store);
      HostPages pages(4096);
      auto admission = device.admit(pages, host_info());
      REQUIRE(admission.ok());
      constexpr std::uint32_t kSlots = 3;
      std::array<std::unique_ptr<NativeRegion>, kSlots> regions;
      std::array<std::atomic<std::uint32_t>*, kSlots> words{};
      for (std::uint32_t r = 0; r < kSlots; ++r) {
        const std::array binding{bind_admitted(pages, *admission.value(), Access::Write, r * 64, 4)};
        const Operation op = kernel_op(LaneKind::Compute, *storer, binding);
        regions[r] = lower(device, std::span<const Operation>(&op, 1), {}, kSlots);
        words[r] = reinterpret_cast<std::atomic<std::uint32_t>*>(pages.host_address() + r * 64);
      }
      int seen = 0;
      int reports = 0;
      RecordingSink sink;
      for (int round = 0; round < 200; ++round) {
        const std::uint32_t r = static_cast<std::uint32_t>(round) % kSlots;
        const std::uint32_t slot = static_cast<std::uint32_t>(round / kSlots) % kSlots;
        words[r]->store(0, std::memory_order_relaxed);
        device.launch(*regions[r], RegionWaits{slot, {}}, sink);
        REQUIRE(sink.wait_for(++reports));
        if (words[r]->load(std::memory_order_acquire) == kMarker) ++seen;
      }
      CHECK(sink.done() == 200);
      CHECK(seen == 200);
    }
  }
}

TEST_CASE("with either flag writer a successor on another lane waits for its predecessor's flag",
          "[cuda][gpu][flags][waits]") {
  for (const CudaFlagWriter writer : {CudaFlagWriter::Kernel, CudaFlagWriter::MemoryOp}) {
    DYNAMIC_SECTION("cuda.flag_write = " << name_of(writer)) {
      CudaDeviceOptions options;
      options.flag_write = writer;
      auto opened = open_gpu(options);
      if (!opened.ok()) {
        WARN("skipped: no CUDA GPU here: " << opened.status().message());
        return;
      }
      CudaDevice& device = *opened.value();
      ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
      // accord_test_sleep_us sleeps 50 ms, then writes kMarker; the successor copies it out
      // on the Download lane. Without the wait it would copy the zero that was there.
      KernelContract sleep;
      sleep.bindings = {{4, 4, Access::ReadWrite, "marker"}};
      append_constant(sleep.constants, std::uint32_t{50'000});
      const auto sleeper = load_or_fail(device, gpu_image(ptx, "accord_test_sleep_us"), sleep);
      auto marker = device.allocate({64, MemoryPlacement::gpu_local(0)});
      auto out = device.allocate({64, MemoryPlacement::gpu_local(0)});
      REQUIRE(marker.ok());
      REQUIRE(out.ok());
      const std::array sleep_binding{bind(*marker.value(), Access::ReadWrite, 0, 4)};
      const Operation sleep_op = kernel_op(LaneKind::Compute, *sleeper, sleep_binding);
      const std::array copy_bindings{bind(*out.value(), Access::Write, 0, 4), bind(*marker.value(), Access::Read, 0, 4)};
      const Operation copy = copy_op(LaneKind::Download, copy_bindings);
      const auto predecessor = lower(device, std::span<const Operation>(&sleep_op, 1));
      const auto successor = lower(device, std::span<const Operation>(&copy, 1));
      RecordingSink first;
      RecordingSink second;
      const std::array waits{RegionWait{predecessor.get(), 0}};
      device.launch(*predecessor, RegionWaits{0, {}}, first);
      device.launch(*successor, RegionWaits{0, waits}, second);
      REQUIRE(first.wait_for(1));
      REQUIRE(second.wait_for(1));
      CHECK(first.done() == 1);
      CHECK(second.done() == 1);
      CHECK(first.last_order() < second.last_order());
      const std::vector<std::uint8_t> back = read_back(device, *out.value());
      std::uint32_t copied = 0;
      std::memcpy(&copied, back.data(), sizeof copied);
      CHECK(copied == kMarker);
    }
  }
}

}  // namespace
}  // namespace accord::devices::cuda
