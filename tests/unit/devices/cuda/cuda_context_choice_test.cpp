// Which context a CUDA device works in (cuda.context, cuda_device.cpp open_context), on
// the stand-in driver: the primary context without MPS, one of its own per device under
// MPS ("auto") or when asked ("own"), the primary context again when an MPS server takes
// no more clients, and each made context destroyed with its device. Tagged [fake].
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace accord::devices::cuda
