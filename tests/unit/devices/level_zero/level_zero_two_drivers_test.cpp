// Two Level Zero drivers at once (the emulator and a copy of it under another file
// name): the loader wraps every handle, and the graph extension, whose table comes from
// the driver and bypasses the loader, works only on translated handles. This proves
// the backend translates before every extension call, and that it must.
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "daemon/devices/level_zero/level_zero_runtime.h"
#include "tests/unit/devices/level_zero/level_zero_test_support.h"
#include "tests/unit/devices/npu_emulator/npu_reference.h"

namespace accord::devices::level_zero::testing {

using namespace std::chrono_literals;

TEST_CASE("with two drivers the extension refuses loader handles and accepts translated ones",
          "[npu][level_zero]") {
  use_two_emulators();
  auto runtime = LevelZeroRuntime::open(LevelZeroOptions{});
  REQUIRE(runtime.ok());
  REQUIRE((*runtime)->drivers().size() == 2);
  const LevelZeroRuntime& rt = **runtime;
  const std::string text = npu_testing::program_cases()[2].text;
  for (const NpuHandle& npu : rt.npus()) {
    const NpuDriver& driver = rt.drivers()[npu.driver];
    CHECK(rt.translate(ZEL_HANDLE_CONTEXT, driver.context.get()) != driver.context.get());  // wrapped
    ze_graph_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES;
    desc.format = ZE_GRAPH_FORMAT_NATIVE;
    desc.inputSize = text.size();
    desc.pInput = reinterpret_cast<const std::uint8_t*>(text.data());
    ze_graph_handle_t graph = nullptr;
    CHECK(driver.graph->pfnCreate(driver.context.get(), npu.device, &desc, &graph) ==
          ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    REQUIRE(driver.graph->pfnCreate(rt.translate(ZEL_HANDLE_CONTEXT, driver.context.get()),
                                    rt.translate(ZEL_HANDLE_DEVICE, npu.device), &desc, &graph) == ZE_RESULT_SUCCESS);
    REQUIRE(driver.graph->pfnDestroy(graph) == ZE_RESULT_SUCCESS);
  }
  // Each driver is its own copy of the library: the two tables are distinct.
  CHECK(rt.drivers()[0].graph != rt.drivers()[1].graph);
}

TEST_CASE("programs run on the NPUs of both drivers at once", "[npu][level_zero]") {
  auto devices = open_npus();
  const auto c = npu_testing::program_cases()[5];
  struct Run {
    std::unique_ptr<LoadedCode> code;
    std::vector<std::unique_ptr<DeviceMemory>> memory;
    std::vector<OperationBinding> bindings;
    std::unique_ptr<NativeRegion> region;
    WaitingSink sink;
    std::vector<std::vector<float>> expected;
  };
  std::vector<std::unique_ptr<Run>> runs;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    Device& npu = *devices[d];
    auto run = std::make_unique<Run>();
    auto code = npu.load(program_image(npu, "mlp", c.text), contract_for(c.elements, c.output));
    REQUIRE(code.ok());
    run->code = std::move(code).value();
    auto args = npu_testing::random_arguments(c, static_cast<unsigned>(d + 11));
    run->expected = args;
    c.reference(run->expected);
    for (std::size_t i = 0; i < args.size(); ++i) {
      auto memory = npu.allocate({args[i].size() * sizeof(float), MemoryPlacement::shared(static_cast<int>(d))});
      REQUIRE(memory.ok());
      std::memcpy((*memory)->host_address(), args[i].data(), args[i].size() * sizeof(float));
      run->bindings.push_back(bind(**memory, c.output[i] ? Access::Write : Access::Read));
      run->memory.push_back(std::move(memory).value());
    }
    Operation op;
    op.kind = OpKind::Kernel;
    op.lane = LaneKind::Npu;
    op.code = run->code.get();
    op.bindings = run->bindings;
    RegionRequest request;
    request.operations = std::span(&op, 1);
    auto region = npu.lower(request);
    REQUIRE(region.ok());
    run->region = std::move(region).value();
    runs.push_back(std::move(run));
  }
  for (std::size_t d = 0; d < devices.size(); ++d) devices[d]->launch(*runs[d]->region, RegionWaits{}, runs[d]->sink);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    INFO("npu:" << d);
    REQUIRE(runs[d]->sink.wait_for(10s));
    REQUIRE(runs[d]->sink.outcome == 0);
    const auto* out = reinterpret_cast<const float*>(runs[d]->memory.back()->host_address());
    for (std::size_t j = 0; j < runs[d]->expected.back().size(); ++j)
      CHECK(out[j] == Approx(runs[d]->expected.back()[j]).epsilon(1e-5));
  }
  for (auto& device : devices) device->shut_down();
}

}  // namespace accord::devices::level_zero::testing
