// A faulting GPU kernel (a write through a wild pointer): the submission fails with
// Execution, gpu:0 becomes lost for the rest of the process (a CUDA fault is sticky for
// the context), host work still completes, and over the daemon accordd keeps answering.
// Linked last so it runs after every other [gpu] case of a plain run.
#include "tests/gpu/gpu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::gpu_test;

TEST_CASE("a faulting GPU kernel fails its work, loses the GPU and spares the host", "[gpu][fault]") {
  GPU_RUNTIME_OR_SKIP(rt);
  GpuKernelImage image;
  image.image = embedded_bytes(accord_gpu_test_ptx, accord_gpu_test_ptx_size, true);
  image.entry = "accord_gpu_wild_write";
  KernelContract contract;
  contract.bindings = {{4, 4, Access::Write, "u32 unused"}};
  append_constant(contract.constants, std::uint64_t{0x10});  // no allocation lives there
  const Kernel wild = UNWRAP(rt.load_gpu_kernel(0, image, contract));
  Buffer target = gpu_buffer(rt, 4);
  Graph g = rt.graph();
  REQUIRE_OK(g.gpu(wild, {target.view()}));
  const ExecutableGraph exe = UNWRAP(std::move(g).prepare());
  const Completion done = UNWRAP(exe.submit());
  CHECK_FAILS_WITH(Execution, done.wait());

  // The GPU is lost, and says why.
  REQUIRE(eventually([&] {
    auto gpu = rt.gpu(0);
    return gpu.ok() && gpu->state == DeviceState::Lost;
  }));
  const DeviceInfo lost = UNWRAP(rt.gpu(0));
  CHECK_FALSE(lost.reason.empty());

  // Host work still runs.
  Buffer a = make_buffer(rt, 64), b = make_buffer(rt, 64);
  fill_on_host(a, 7);
  Graph host = rt.graph();
  REQUIRE_OK(host.copy(b.view(), a.view()));
  run_ok(std::move(host));
  CHECK(read_bytes(b) == repeated(64, 7));

  // The daemon (on that transport) is still up: ListDevices answers, from a new session too.
  auto devices = rt.devices();
  REQUIRE_OK(devices);
  auto again = make_conformance_runtime();
  REQUIRE_OK(again);
  REQUIRE_OK(again->devices());
  if (std::string(conformance_transport_name()) == "daemon") {
    auto gpu = again->gpu(0);
    REQUIRE_OK(gpu);
    CHECK(gpu->state == DeviceState::Lost);
  }
}
