// The ways a region's graph writes its completion flag (cuda.flag_write: the built-in
// flag kernel, the default; the same kernel launched early, as the last kernels begin, and
// waiting for them on the GPU; or a stream memory operation), on a real GPU: each is what the
// device reports using for regions with kernels (regions of copies and fills, and those of
// sessions above the default priority, end with the memory operation either way), every slot's launch is reported by its own flag, and a kernel's
// writes to host pages are visible by the time its launch is reported (a smoke test of
// the tail's fence: in-order PCIe writes would pass it too). (That a successor waits on
// either: cuda_region_test.cpp.) Tagged [gpu].
#include <array>
#include <atomic>
#include <chrono>

#include "daemon/devices/cuda/cuda_region.h"
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

const char* name_of(CudaFlagWriter writer) {
  switch (writer) {
    case CudaFlagWriter::Kernel: return "kernel";
    case CudaFlagWriter::EarlyKernel: return "early_kernel";
    case CudaFlagWriter::MemoryOp: return "memory_op";
  }
  return "?";
}

TEST_CASE("each flag writer is the one used, and a kernel's host writes are visible when its launch is reported",
          "[cuda][gpu][flags]") {
  for (const CudaFlagWriter writer : {CudaFlagWriter::Kernel, CudaFlagWriter::EarlyKernel, CudaFlagWriter::MemoryOp}) {
    DYNAMIC_SECTION("cuda.flag_write = " << name_of(writer)) {
      CudaDeviceOptions options;
      options.flag_write = writer;
      // Only a slot's own flag reports its launch: no stream query stands in for a flag
      // that a wrongly retargeted tail wrote elsewhere.
      options.poll.event_check = std::chrono::seconds(60);
      ACCORD_CUDA_TEST_GPU_WITH(device, options);
      ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
      if (early_kernel_unavailable(device, writer)) return;
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
      for (const auto& region : regions) CHECK(static_cast<const CudaRegion&>(*region).tail_writer() == writer);
      // A region of fills only ends with the memory operation whatever was asked: its
      // completion must not wait for an SM. Its second slot is reported by its own flag.
      const OperationBinding fill_binding = bind_admitted(pages, *admission.value(), Access::Write, 1024, 64);
      const Operation fill = fill_op(LaneKind::Compute, fill_binding, 0x7E);
      const auto fills = lower(device, std::span<const Operation>(&fill, 1), {}, 2);
      CHECK(static_cast<const CudaRegion&>(*fills).tail_writer() == CudaFlagWriter::MemoryOp);
      RecordingSink fill_sink;
      device.launch(*fills, RegionWaits{1, {}}, fill_sink);
      REQUIRE(fill_sink.wait_for(1));
      CHECK(fill_sink.done() == 1);
      CHECK(static_cast<std::uint8_t>(pages.host_address()[1024 + 63]) == 0x7E);
      // Nor may a kernel's region of a session above the default priority: its tail would
      // queue for an SM behind a neighbour's blocks.
      const std::array urgent_binding{bind_admitted(pages, *admission.value(), Access::Write, 2048, 4)};
      const Operation urgent_op = kernel_op(LaneKind::Compute, *storer, urgent_binding);
      RegionRequest urgent;
      urgent.operations = std::span<const Operation>(&urgent_op, 1);
      urgent.slots = 1;
      urgent.priority = 1;
      auto lowered = device.lower(urgent);
      INFO("lower: " << lowered.status().to_string());
      REQUIRE(lowered.ok());
      CHECK(static_cast<const CudaRegion&>(*lowered.value()).tail_writer() == CudaFlagWriter::MemoryOp);
      RecordingSink urgent_sink;
      device.launch(*lowered.value(), RegionWaits{0, {}}, urgent_sink);
      REQUIRE(urgent_sink.wait_for(1));
      CHECK(urgent_sink.done() == 1);
      CHECK(reinterpret_cast<std::atomic<std::uint32_t>*>(pages.host_address() + 2048)->load() == kMarker);
    }
  }
}

}  // namespace
}  // namespace accord::devices::cuda
