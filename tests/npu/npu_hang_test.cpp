// A hung NPU program (the emulator's `stall` op never finishes): the engine's watchdog
// fails it with Execution, npu:0 becomes lost, and host work still completes. Linked
// last so it runs after every other [npu] case of a plain run: over the daemon, npu:0
// stays lost for the rest of the process.
#include "tests/npu/npu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::npu_test;

TEST_CASE("a hung NPU program is failed by the watchdog, loses the NPU and spares the host", "[npu][hang]") {
  RuntimeOptions options = npu_options();
  // Embedded: this runtime's own engine. The daemon suite's accordd runs with
  // --watchdog-seconds 1 (the smallest the flag takes).
  options.watchdog_timeout = std::chrono::milliseconds(300);
  const Runtime rt = npu_runtime(options);
  const std::string text = "accord-npu-program 1\ninput x f32 4\noutput y f32 4\nstall\nrelu y x\n";
  const Kernel hang = load_program(rt, text, "stall", {{4, false}, {4, true}});
  Buffer x = shared_buffer(rt, 4), y = shared_buffer(rt, 4);

  Graph g = rt.graph();
  REQUIRE_OK(g.npu(hang, {x.view(), y.view()}));
  const ExecutableGraph exe = prepare(std::move(g));
  const auto began = std::chrono::steady_clock::now();
  const Completion done = UNWRAP(exe.submit());
  CHECK_FAILS_WITH(Execution, done.wait());
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(10));

  REQUIRE(eventually([&] {
    auto npu = rt.npu(0);
    return npu.ok() && npu->state == DeviceState::Lost;
  }));
  const DeviceInfo lost = UNWRAP(rt.npu(0));
  CHECK_FALSE(lost.reason.empty());

  // Host work still runs, on this runtime and on a new one.
  Buffer a = make_buffer(rt, 64), b = make_buffer(rt, 64);
  fill_on_host(a, 9);
  run_once(copy_graph(rt, b.view(), a.view()));
  CHECK(read_bytes(b) == repeated(64, 9));
  const Kernel twice = load_scale(rt, 16, 2.0f);
  Graph host = rt.graph();
  REQUIRE_OK(host.host(twice, {a.view(), b.view()}));
  run_once(prepare(std::move(host)));

  auto again = make_conformance_runtime(npu_options());
  REQUIRE_OK(again);
  REQUIRE_OK(again->devices());
}
