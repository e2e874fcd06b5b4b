// Which context a CUDA device works in (cuda.context, cuda_device.cpp open_context), on
// the stand-in driver: the primary context without MPS, one of its own per device under
// MPS ("auto") or when asked ("own"), the primary context again when an MPS server takes
// no more clients, and each made context destroyed with its device. Tagged [fake].
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_region.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using testing::FakeGpus;

int lines_starting(const std::vector<std::string>& log, std::string_view prefix) {
  return static_cast<int>(std::count_if(log.begin(), log.end(), [&](const std::string& l) { return l.starts_with(prefix); }));
}

CudaDeviceOptions with_context(CudaContextChoice choice) {
  CudaDeviceOptions options;
  options.context = choice;
  return options;
}

TEST_CASE("without MPS every device of the process works in the GPU's primary context", "[cuda][context][fake]") {
  FakeGpus first(1, {}, with_context(CudaContextChoice::Auto));
  CHECK_FALSE(first.gpu(0).owns_context());
  CHECK(lines_starting(first.opening_log(), "cuCtxCreate") == 0);
  FakeGpus second(1, {}, with_context(CudaContextChoice::Primary));
  CHECK(second.gpu(0).context().context == first.gpu(0).context().context);
}

TEST_CASE("under MPS each device of the process gets a context of its own, destroyed with it",
          "[cuda][context][fake]") {
  const auto choice = GENERATE(CudaContextChoice::Auto, CudaContextChoice::Own);
  INFO("cuda.context " << (choice == CudaContextChoice::Auto ? "auto" : "own"));
  FakeGpus gpus(2, {"mps=1"}, with_context(choice));
  CHECK(lines_starting(gpus.opening_log(), "cuCtxCreate dev=0") == 1);
  CHECK(lines_starting(gpus.opening_log(), "cuCtxCreate dev=1") == 1);
  CHECK(lines_starting(gpus.opening_log(), "cuCtxDestroy") == 0);
  CHECK(gpus.gpu(0).owns_context());
  CHECK(gpus.gpu(1).owns_context());

  // A second runtime of the process opening GPU 0: another client of the server.
  auto again = CudaDevice::open(gpus.shared_syms(), 0, with_context(choice));
  REQUIRE(again.ok());
  CHECK(again.value()->owns_context());
  CHECK(again.value()->context().context != gpus.gpu(0).context().context);
  {
    auto memory = again.value()->allocate({4096, MemoryPlacement::gpu_local(0)});
    REQUIRE(memory.ok());
  }
  gpus.control("clear");
  again.value().reset();
  CHECK(gpus.count("cuCtxDestroy dev=0") == 1);  // its own, not the first device's
  CHECK(gpus.gpu(0).free_memory_bytes().ok());   // which still works
}

TEST_CASE("cuda.context = own without MPS still makes a context; auto falls back when MPS refuses a client",
          "[cuda][context][fake]") {
  SECTION("own, no MPS: asked for, made") {
    FakeGpus gpus(1, {}, with_context(CudaContextChoice::Own));
    CHECK(gpus.gpu(0).owns_context());
  }
  SECTION("auto, an MPS server at its client limit: the primary context") {
    FakeGpus gpus(1, {"mps=1", "fail=cuCtxCreate"}, with_context(CudaContextChoice::Auto));
    CHECK_FALSE(gpus.gpu(0).owns_context());
  }
}

TEST_CASE("cuda.context = own is an error naming the GPU when the driver refuses the context",
          "[cuda][context][fake]") {
  FakeGpus gpus(1, {"mps=1"}, with_context(CudaContextChoice::Own));
  gpus.control("fail=cuCtxCreate");
  const auto opened = CudaDevice::open(gpus.shared_syms(), 0, with_context(CudaContextChoice::Own));
  REQUIRE_FALSE(opened.ok());
  CHECK(std::string(opened.status().message()).find("creating a context of its own on gpu:0") != std::string::npos);
  CHECK(std::string(opened.status().message()).find("cuCtxCreate") != std::string::npos);
}

// The context of each launch logged since the last "clear", in order.
std::vector<std::string> launch_contexts(const FakeGpus& gpus) {
  std::vector<std::string> contexts;
  for (const std::string& line : gpus.log())
    if (line.starts_with("launch-context ")) contexts.push_back(line.substr(15));
  return contexts;
}

TEST_CASE("cuda.tenant_contexts spreads sessions over contexts of their own, each made when first needed",
          "[cuda][context][fake]") {
  CudaDeviceOptions options = with_context(CudaContextChoice::Primary);
  options.tenant_contexts = 3;
  options.poll.event_check = std::chrono::seconds(60);  // only a flag reports a launch
  FakeGpus gpus(1, {"graphs=1", "mps=1"}, options);
  CudaDevice& device = gpus.gpu(0);
  CHECK(gpus.count("cuCtxCreate") == 0);  // none before a session needs one

  // Sessions 1..4 (RegionRequest::tenant): 1 and 4 in the device's own context, 2 and 3
  // in one made for each.
  std::vector<std::unique_ptr<NativeRegion>> regions;
  for (std::uint64_t tenant = 1; tenant <= 4; ++tenant) {
    RegionRequest request;
    request.slots = 2;
    request.tenant = tenant;
    auto lowered = device.lower(request);
    INFO(lowered.status().to_string());
    REQUIRE(lowered.ok());
    regions.push_back(std::move(lowered).value());
  }
  CHECK(gpus.count("cuCtxCreate dev=0") == 2);
  const auto index = [&](std::size_t r) { return static_cast<const CudaRegion&>(*regions[r]).tenant_context(); };
  CHECK(index(0) == 0);
  CHECK(index(1) == 1);
  CHECK(index(2) == 2);
  CHECK(index(3) == 0);
  // Every region's completion words come from the one arena, whatever its context.
  for (const auto& region : regions) CHECK(region->completion_word(1).has_value());

  testing::RecordingSink sink;
  gpus.control("clear");
  for (std::size_t r = 0; r < regions.size(); ++r) testing::launch_and_wait(device, *regions[r], sink, 1);
  CHECK(sink.done() == 4);
  const std::vector<std::string> contexts = launch_contexts(gpus);
  REQUIRE(contexts.size() == 4);
  CHECK(contexts[0] == std::to_string(reinterpret_cast<std::uintptr_t>(device.context().context)));
  CHECK(contexts[3] == contexts[0]);
  CHECK(contexts[1] != contexts[0]);
  CHECK(contexts[2] != contexts[0]);
  CHECK(contexts[2] != contexts[1]);

  regions.clear();
  gpus.control("clear");
  gpus.close_devices();
  CHECK(gpus.count("cuCtxDestroy dev=0") == 2);  // the two made for sessions, not the primary
}

TEST_CASE("a region lowered in a tenant context is made wholly there, past a new page of flags",
          "[cuda][context][fake]") {
  CudaDeviceOptions options = with_context(CudaContextChoice::Primary);
  options.tenant_contexts = 2;
  options.completion = CudaCompletionMode::FlagAndEvent;  // every slot's event is used
  FakeGpus gpus(1, {"graphs=1", "mps=1"}, options);
  CudaDevice& device = gpus.gpu(0);
  // 100 slots take more flags than a page holds (64), so the words' context (the
  // device's own) registers a page while the region is being made.
  RegionRequest request;
  request.tenant = 2;
  REQUIRE(device.lower(request).ok());  // makes the tenant context, and probes its flags
  request.slots = 100;
  gpus.control("clear");
  auto lowered = device.lower(request);
  REQUIRE(lowered.ok());
  const auto& region = static_cast<const CudaRegion&>(*lowered.value());
  REQUIRE(region.tenant_context() == 1);
  CHECK(gpus.count("cuMemHostRegister") >= 1);
  std::vector<std::string> events;
  for (const std::string& line : gpus.log())
    if (line.starts_with("event-context ")) events.push_back(line.substr(14));
  REQUIRE(events.size() == 100);
  const std::string own = std::to_string(reinterpret_cast<std::uintptr_t>(device.context().context));
  for (const std::string& context : events) CHECK(context != own);
  CHECK(std::count(events.begin(), events.end(), events.front()) == 100);
  CHECK(region.slot(99).context == region.slot(0).context);
}

TEST_CASE("a session whose context the driver refuses shares the device's own", "[cuda][context][fake]") {
  CudaDeviceOptions options = with_context(CudaContextChoice::Primary);
  options.tenant_contexts = 2;
  FakeGpus gpus(1, {"graphs=1", "mps=1", "fail=cuCtxCreate"}, options);
  RegionRequest request;
  request.tenant = 2;
  auto lowered = gpus.gpu(0).lower(request);
  REQUIRE(lowered.ok());
  CHECK(static_cast<const CudaRegion&>(*lowered.value()).tenant_context() == 0);
}

}  // namespace
}  // namespace accord::devices::cuda
