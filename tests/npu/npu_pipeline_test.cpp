// Host and NPU work in one graph: a host -> NPU -> host pipeline on Shared buffers,
// ordered by the dependencies the graph infers from the buffers' accesses, and
// independent NPU and host work overlapping in time (shown by the trace).
#include "tests/npu/npu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::npu_test;

TEST_CASE("a host -> NPU -> host pipeline on Shared buffers runs in dependency order", "[npu]") {
  const Runtime rt = npu_runtime();
  constexpr std::uint32_t count = 4096;
  // src (host-visible) --host x2--> x (Shared) --NPU relu(x) + bias--> y (Shared) --host x3--> out
  const std::string text = "accord-npu-program 1\ninput x f32 " + dims(count) + "\ninput bias f32 " + dims(count) +
                           "\noutput y f32 " + dims(count) + "\ntensor r f32 " + dims(count) +
                           "\nrelu r x\nadd y r bias\n";
  const Kernel program = load_program(rt, text, "relu-add", {{count, false}, {count, false}, {count, true}});
  const Kernel twice = load_scale(rt, count, 2.0f);
  const Kernel thrice = load_scale(rt, count, 3.0f);

  const std::vector<float> src_values = random_floats(count, 11), bias_values = random_floats(count, 12);
  Buffer src = make_buffer(rt, count * sizeof(float));
  Buffer x = shared_buffer(rt, count), bias = shared_buffer(rt, count), y = shared_buffer(rt, count);
  Buffer out = make_buffer(rt, count * sizeof(float));
  write_floats(src, src_values);
  write_floats(bias, bias_values);
  fill_on_host(x, 0xff);  // stale values (NaN) that a misordered NPU run would read
  fill_on_host(y, 0xff);

  Graph g = rt.graph();
  const Node produce = UNWRAP(g.host(twice, {src.view(), x.view()}));
  const Node infer = UNWRAP(g.npu(program, {x.view(), bias.view(), y.view()}));
  const Node consume = UNWRAP(g.host(thrice, {y.view(), out.view()}));
  const ExecutableGraph exe = prepare(std::move(g));
  CHECK(deps_of(exe, infer) == indices({produce}));
  CHECK(deps_of(exe, consume) == indices({infer}));
  for (int round = 0; round < 2; ++round) run_once(exe);  // twice: a reused graph too

  std::vector<float> want(count);
  for (std::size_t i = 0; i < count; ++i) want[i] = 3.0f * (std::max(2.0f * src_values[i], 0.0f) + bias_values[i]);
  check_close(read_floats(out), want);
}

TEST_CASE("independent NPU and host work overlap in time", "[npu]") {
  const Runtime rt = npu_runtime();
  constexpr std::size_t n = 192;
  const std::string text = "accord-npu-program 1\ninput a f32 " + dims(n, n) + "\ninput b f32 " + dims(n, n) +
                           "\noutput c f32 " + dims(n, n) + "\nmatmul c a b\n";
  const Kernel program = load_program(rt, text, "matmul-192", {{n * n, false}, {n * n, false}, {n * n, true}});
  // Longer than the NPU matmul, well under accordd's 1 s watchdog in the daemon suite.
  const Kernel sleeper = load_sleep(rt, 500'000);
  const std::vector<float> a = random_floats(n * n, 21), b = random_floats(n * n, 22);
  Buffer ba = shared_buffer(rt, n * n), bb = shared_buffer(rt, n * n), bc = shared_buffer(rt, n * n);
  write_floats(ba, a);
  write_floats(bb, b);
  Buffer marker = make_buffer(rt, 4);

  Graph g = rt.graph();
  const Node sleep = UNWRAP(g.host(sleeper, {marker.view()}));
  const Node matmul = UNWRAP(g.npu(program, {ba.view(), bb.view(), bc.view()}));
  const ExecutableGraph exe = prepare(std::move(g));
  CHECK(deps_of(exe, sleep).empty());
  CHECK(deps_of(exe, matmul).empty());

  REQUIRE_OK(rt.start_trace(64));
  run_once(exe);
  const std::optional<ExecutionTrace> trace = rt.finish_trace();
  REQUIRE(trace.has_value());
  check_close(read_floats(bc), cpu_matmul(a, b, n, n, n), 1e-3f);
  CHECK(u32_at(read_bytes(marker), 0) == kSleepMarker);

  const TraceEvent* npu_event = nullptr;
  const TraceEvent* host_event = nullptr;
  for (const TraceEvent& e : trace->events) {
    if (e.device == DeviceId::npu(0) && !e.failed) npu_event = &e;
    if (e.device == DeviceId::host() && e.lane == LaneKind::Host && !e.failed) host_event = &e;
  }
  INFO(trace->to_json());
  REQUIRE(npu_event != nullptr);
  REQUIRE(host_event != nullptr);
  const double start = std::max(npu_event->start_us, host_event->start_us);
  const double end = std::min(npu_event->start_us + npu_event->duration_us,
                              host_event->start_us + host_event->duration_us);
  INFO("npu [" << npu_event->start_us << ", +" << npu_event->duration_us << "] host [" << host_event->start_us
               << ", +" << host_event->duration_us << "] (us)");
  CHECK(start < end);
}
