// The first program to read: allocate host-visible buffers, write inputs under a
// WriteGuard, record a small pipeline with independent and dependent operations,
// prepare it once, submit it several times, read the result under a ReadGuard, and
// print statistics and a trace you can open in Perfetto (ui.perfetto.dev).
//
//   accord_pipeline_example [--connect SOCKET] [--trace FILE.json] [--runs N]
//
// Without --connect the engine runs in this process (Runtime::embedded); with it, the
// same code runs as a client of accordd listening on SOCKET (Runtime::connect).
#include <accord/accord.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int fail(const char* what, const accord::Status& status) {
  std::fprintf(stderr, "error: %s: %s\n", what, status.to_string().c_str());
  return 1;
}

// Unwraps a Result or prints its error and leaves main.
#define CHECK_OK(var, expr, what)              \
  auto var##_result = (expr);                  \
  if (!var##_result.ok()) return fail(what, var##_result.status()); \
  auto var = std::move(var##_result).value()

}  // namespace

int main(int argc, char** argv) {
  std::string trace_path = "accord-trace.json";
  std::string socket;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trace") && i + 1 < argc) trace_path = argv[++i];
    else if (!std::strcmp(argv[i], "--connect") && i + 1 < argc) socket = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--connect SOCKET] [--trace FILE.json] [--runs N]\n", argv[0]);
      return 2;
    }
  }
  constexpr std::uint32_t kCount = 1024;
  constexpr std::size_t kBytes = kCount * sizeof(float);

  // One runtime: the engine in this process, or a session with accordd. Everything
  // below is the same code either way.
  CHECK_OK(runtime, socket.empty() ? accord::Runtime::embedded() : accord::Runtime::connect(socket),
           socket.empty() ? "starting the embedded runtime" : "connecting to accordd");
  std::printf("runtime: %s\n", socket.empty() ? "embedded (engine in this process)" : ("accordd at " + socket).c_str());

  // Buffers are tracked allocations with an explicit placement.
  CHECK_OK(x, runtime.allocate(kBytes), "allocating x");
  CHECK_OK(y, runtime.allocate(kBytes), "allocating y");
  CHECK_OK(sum, runtime.allocate(kBytes), "allocating sum");
  CHECK_OK(scaled, runtime.allocate(kBytes), "allocating scaled");
  CHECK_OK(result, runtime.allocate(kBytes), "allocating result");
  CHECK_OK(scratch, runtime.allocate(kBytes), "allocating scratch");

  // Inputs: written on the host under an exclusive lease.
  {
    CHECK_OK(wx, x.map_write(), "mapping x");
    CHECK_OK(wy, y.map_write(), "mapping y");
    for (std::uint32_t i = 0; i < kCount; ++i) {
      wx.as<float>()[i] = static_cast<float>(i) * 0.5f - 100.0f;
      wy.as<float>()[i] = 1.0f;
    }
  }  // releasing a WriteGuard makes the host's bytes authoritative

  // Built-in kernels are loaded by name with a contract that says what they touch.
  CHECK_OK(add, runtime.load_kernel(accord::builtin::add_f32(kCount)), "loading add_f32");
  CHECK_OK(saxpy, runtime.load_kernel(accord::builtin::saxpy_f32(kCount, 2.0f)), "loading saxpy_f32");
  CHECK_OK(relu, runtime.load_kernel(accord::builtin::relu_f32(kCount)), "loading relu_f32");

  // The pipeline. No edges are written: ordering comes from what each node reads and writes.
  accord::Graph graph = runtime.graph();
  CHECK_OK(n_fill, graph.fill(scratch.view(), 0), "recording fill");           // independent
  CHECK_OK(n_add, graph.host(add, {x.view(), y.view(), sum.view()}), "recording add");
  CHECK_OK(n_copy, graph.copy(scaled.view(), y.view()), "recording copy");      // reads y: no edge to add
  CHECK_OK(n_saxpy, graph.host(saxpy, {sum.view(), scaled.view()}), "recording saxpy");  // scaled = 2*sum + scaled
  CHECK_OK(n_relu, graph.host(relu, {scaled.view(), result.view()}), "recording relu");
  CHECK_OK(exe, std::move(graph).prepare(), "preparing");

  std::printf("prepared %zu nodes into %zu regions\n", exe.nodes(), exe.regions());
  const accord::Node nodes[] = {n_fill, n_add, n_copy, n_saxpy, n_relu};
  const char* names[] = {"fill scratch", "add x+y->sum", "copy y->scaled", "saxpy sum,scaled", "relu scaled->result"};
  for (int i = 0; i < 5; ++i) {
    std::printf("  node %u %-20s after:", nodes[i].index, names[i]);
    for (accord::Node d : exe.dependencies(nodes[i])) std::printf(" %u", d.index);
    std::printf("\n");
  }
  for (std::size_t r = 0; r < exe.regions(); ++r) {
    const accord::RegionInfo& info = exe.region(r);
    std::printf("  region %zu on the %s lane: %zu node(s), after regions:", r,
                std::string(accord::to_string(info.lane)).c_str(), info.nodes.size());
    for (std::size_t p : info.predecessors) std::printf(" %zu", p);
    std::printf("\n");
  }

  if (auto s = runtime.start_trace(256); !s.ok()) return fail("starting the trace", s);
  for (int run = 0; run < runs; ++run) {
    CHECK_OK(done, exe.submit(), "submitting");  // never blocks
    if (auto s = done.wait(); !s.ok()) return fail("running the pipeline", s);
    if (auto p = done.profile())
      std::printf("run %d: %.1f us host-observed (queued %.1f us)\n", run, p->elapsed_us,
                  p->queue_us.value_or(0.0));
  }
  auto trace = runtime.finish_trace();

  // Read the result under a shared lease and check it against the CPU.
  {
    CHECK_OK(r, result.map_read(), "mapping result");
    int wrong = 0;
    for (std::uint32_t i = 0; i < kCount; ++i) {
      const float xi = static_cast<float>(i) * 0.5f - 100.0f;
      const float expected = std::max(0.0f, 2.0f * (xi + 1.0f) + 1.0f);
      if (std::fabs(r.as<float>()[i] - expected) > 1e-4f) ++wrong;
    }
    std::printf("result: %s (result[0]=%.1f, result[%u]=%.1f)\n", wrong ? "WRONG" : "correct",
                r.as<float>()[0], kCount - 1, r.as<float>()[kCount - 1]);
    if (wrong) return 1;
  }

  const accord::Statistics st = runtime.statistics();
  std::printf(
      "statistics (host-observed): allocations=%llu submissions=%llu completions=%llu "
      "copied_bytes=%llu native_graphs_prepared=%llu live_bytes=%llu peak_bytes=%llu\n",
      (unsigned long long)st.allocations, (unsigned long long)st.submissions,
      (unsigned long long)st.completions, (unsigned long long)st.copied_bytes,
      (unsigned long long)st.native_graphs_prepared, (unsigned long long)st.live_bytes,
      (unsigned long long)st.peak_bytes);
  if (trace) {
    if (auto s = trace->write_json(trace_path); !s.ok()) return fail("writing the trace", s);
    std::printf("trace: %zu region events (%llu dropped) written to %s\n", trace->events.size(),
                (unsigned long long)trace->dropped, trace_path.c_str());
  }
  return 0;
}
