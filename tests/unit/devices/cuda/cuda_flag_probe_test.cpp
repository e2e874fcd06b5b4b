// CudaFlagPool::probe (cuda_flags.cpp) on the stand-in driver's graph engine
// (fake_libcuda_gpus.cpp, "graphs=1"), without a GPU: which writer a device settles on
// when each part of the kernel's or the memory operation's tail fails, or pretends to
// work and does not (a retarget that changes nothing), that cuda.completion = event
// compiles no flag kernel, and that a region's launches are reported by their slots' own
// flags through CudaDevice::launch and the completion thread. Tagged [fake].
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_region.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using testing::FakeGpus;

struct ProbeCase {
  const char* name;
  std::vector<std::string> controls;
  CudaFlagWriter asked;
  std::optional<CudaFlagWriter> settled;
};

TEST_CASE("the flag probe settles on the kernel where its tail works end to end, else on the memory operation",
          "[cuda][flags][fake]") {
  constexpr auto kKernel = CudaFlagWriter::Kernel;
  constexpr auto kMemoryOp = CudaFlagWriter::MemoryOp;
  constexpr auto kEarly = CudaFlagWriter::EarlyKernel;
  const std::vector<ProbeCase> cases = {
      {"the early kernel is asked for", {"graphs=1"}, kEarly, kEarly},
      {"a GPU before sm_90 refuses the early kernel's module", {"graphs=1", "fail=sm_90"}, kEarly, kKernel},
      {"the driver cannot add programmatic edges", {"graphs=1", "fail=cuGraphAddDependencies"}, kEarly, kKernel},
      {"the driver cannot tell a kernel node", {"graphs=1", "fail=cuGraphNodeGetType"}, kEarly, kKernel},
      {"pointing an early tail at another flag changes nothing", {"graphs=1", "ignore=cuGraphExecKernelNodeSetParams"},
       kEarly, kMemoryOp},
      {"the driver refuses every PTX", {"graphs=1", "fail=cuModuleLoadDataEx"}, kEarly, kMemoryOp},
      {"both writers work", {"graphs=1"}, kKernel, kKernel},
      {"the memory operation is asked for", {"graphs=1"}, kMemoryOp, kMemoryOp},
      {"the driver refuses the PTX", {"graphs=1", "fail=cuModuleLoadDataEx"}, kKernel, kMemoryOp},
      {"a kernel tail cannot be pointed at another flag", {"graphs=1", "fail=cuGraphExecKernelNodeSetParams"},
       kKernel, kMemoryOp},
      {"pointing a kernel tail at another flag changes nothing", {"graphs=1", "ignore=cuGraphExecKernelNodeSetParams"},
       kKernel, kMemoryOp},
      {"there is no memory-operation node", {"graphs=1", "fail=cuGraphAddBatchMemOpNode"}, kKernel, kKernel},
      {"pointing the asked-for memory operation elsewhere changes nothing",
       {"graphs=1", "ignore=cuGraphExecBatchMemOpNodeSetParams"}, kMemoryOp, std::nullopt},
      {"no graph launches", {"graphs=1", "fail=cuGraphLaunch"}, kKernel, std::nullopt},
      {"the driver has no graphs", {}, kKernel, std::nullopt},
  };
  for (const ProbeCase& c : cases) {
    DYNAMIC_SECTION(c.name) {
      CudaDeviceOptions options;
      options.flag_write = c.asked;
      FakeGpus gpus(1, c.controls, options);
      const std::optional<CudaFlagWriter> settled = gpus.gpu(0).flag_writer();
      CHECK(settled.has_value() == c.settled.has_value());
      if (settled && c.settled) CHECK(*settled == *c.settled);
    }
  }
}

TEST_CASE("the early flag kernel follows its probe's kernel by a programmatic edge from the launch-order port",
          "[cuda][flags][fake]") {
  CudaDeviceOptions options;
  options.flag_write = CudaFlagWriter::EarlyKernel;
  FakeGpus gpus(1, {"graphs=1"}, options);
  REQUIRE(gpus.gpu(0).flag_writer() == CudaFlagWriter::EarlyKernel);
  const auto& log = gpus.opening_log();
  const auto has = [&log](const std::string& line) { return std::find(log.begin(), log.end(), line) != log.end(); };
  CHECK(has("cuModuleLoadDataEx accord_completion_flag"));
  CHECK(has("cuModuleLoadDataEx accord_completion_flag_early"));
  CHECK(has("cuGraphAddDependencies programmatic port=" + std::to_string(CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER)));
}

TEST_CASE("the flag kernel and its early variant are compiled once per GPU, and not at all with cuda.completion = "
          "event",
          "[cuda][flags][fake]") {
  const auto loads = [](const FakeGpus& gpus) {
    const auto& log = gpus.opening_log();
    return std::count_if(log.begin(), log.end(),
                         [](const std::string& line) { return line.starts_with("cuModuleLoadDataEx"); });
  };
  // The default options ask for the early kernel, which needs the plain one too.
  const CudaDeviceOptions defaults;
  CudaDeviceOptions plain;
  plain.flag_write = CudaFlagWriter::Kernel;
  for (const auto& [options, modules] : {std::pair{defaults, 4}, std::pair{plain, 2}}) {
    DYNAMIC_SECTION("flags, modules per two GPUs: " << modules) {
      FakeGpus gpus(2, {"graphs=1"}, options);
      CHECK(loads(gpus) == modules);
      CHECK(gpus.gpu(1).flag_writer() == options.flag_write);
    }
  }
  SECTION("events") {
    CudaDeviceOptions options;
    options.completion = CudaCompletionMode::Event;
    FakeGpus gpus(2, {"graphs=1"}, options);
    CHECK(loads(gpus) == 0);
    CHECK_FALSE(gpus.gpu(0).flag_writer().has_value());
  }
}

TEST_CASE("a region of no operation on a fake GPU ends with the memory operation and each slot is reported by its "
          "own flag",
          "[cuda][flags][fake]") {
  CudaDeviceOptions options;
  // Only a flag may report a launch: no stream query stands in for a late one.
  options.poll.event_check = std::chrono::seconds(60);
  FakeGpus gpus(1, {"graphs=1"}, options);
  CudaDevice& device = gpus.gpu(0);
  REQUIRE(device.flag_writer() == CudaFlagWriter::EarlyKernel);
  constexpr std::uint32_t kSlots = 3;
  const auto region = testing::lower(device, {}, {}, kSlots);
  const auto& cuda_region = static_cast<const CudaRegion&>(*region);
  CHECK(cuda_region.tail_writer() == CudaFlagWriter::MemoryOp);  // no kernel in it
  CHECK(cuda_region.successors_wait_on_flag());
  testing::RecordingSink sink;
  for (std::uint32_t round = 0; round < 2 * kSlots; ++round) testing::launch_and_wait(device, *region, sink, round % kSlots);
  CHECK(sink.done() == static_cast<int>(2 * kSlots));
  CHECK(sink.errors() == 0);
}

}  // namespace
}  // namespace accord::devices::cuda
