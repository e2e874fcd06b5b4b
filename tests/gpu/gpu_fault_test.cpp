// A faulting GPU kernel (a write through a wild pointer): the submission fails with
// Execution and host work still completes. Embedded, gpu:0 becomes lost for the rest
// of the process (a CUDA fault is sticky for the context). Over the daemon the GPU runs
// in an executor process: accordd keeps answering, restarts the executor, and gpu:0
// serves new work again, while what was made on it before the fault stays lost.
// Linked last so it runs after every other [gpu] case of a plain run.
#include <array>
#include <string>
#include <vector>

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
  Buffer bystander = gpu_buffer(rt, 4);  // made before the fault, used by nothing that faulted
  Graph g = rt.graph();
  REQUIRE_OK(g.gpu(wild, {target.view()}));
  const ExecutableGraph exe = UNWRAP(std::move(g).prepare());
  const Completion done = UNWRAP(exe.submit());
  CHECK_FAILS_WITH(Execution, done.wait());

  const bool daemon = std::string(conformance_transport_name()) == "daemon";
  if (!daemon) {
    // The GPU is lost, and says why.
    REQUIRE(eventually([&] {
      auto gpu = rt.gpu(0);
      return gpu.ok() && gpu->state == DeviceState::Lost;
    }));
    const DeviceInfo lost = UNWRAP(rt.gpu(0));
    CHECK_FALSE(lost.reason.empty());
  } else {
    // The executor was restarted: gpu:0 is present again and counts the recovery.
    REQUIRE(eventually([&] {
      auto gpu = rt.gpu(0);
      return gpu.ok() && gpu->state == DeviceState::Present && gpu->recoveries >= 1;
    }));
    // What was made before the fault is lost, naming the restart...
    Graph stale = rt.graph();
    REQUIRE_OK(stale.fill(bystander.view(), 1));
    auto stale_exe = std::move(stale).prepare();
    REQUIRE_FALSE(stale_exe.ok());
    CHECK(stale_exe.status().kind() == ErrorKind::DeviceLost);
    CHECK_THAT(std::string(stale_exe.status().message()), Catch::Contains("restarted"));
    // ...and new memory and kernels compute the right values.
    const std::vector<float> a(64, 1.5f), b(64, 2.25f);
    const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(64), add_f32_contract(64)));
    Buffer ha = make_buffer(rt, 256), hb = make_buffer(rt, 256), out = make_buffer(rt, 256);
    Buffer ga = gpu_buffer(rt, 256), gb = gpu_buffer(rt, 256), gc = gpu_buffer(rt, 256);
    write_floats(ha, a);
    write_floats(hb, b);
    Graph g2 = rt.graph();
    REQUIRE_OK(g2.copy(ga.view(), ha.view()));
    REQUIRE_OK(g2.copy(gb.view(), hb.view()));
    const std::array<BufferView, 3> views = {ga.view(), gb.view(), gc.view()};
    REQUIRE_OK(g2.gpu(add, views));
    REQUIRE_OK(g2.copy(out.view(), gc.view()));
    run_ok(std::move(g2));
    CHECK(read_floats(out) == std::vector<float>(64, 3.75f));
  }

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
  if (daemon) {
    auto gpu = again->gpu(0);
    REQUIRE_OK(gpu);
    CHECK(gpu->state == DeviceState::Present);
  }
}
