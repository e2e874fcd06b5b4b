// The GPU version of pipeline.cpp: upload inputs (HostVisible -> GpuLocal copies on the
// Upload lane), run two dependent CUDA kernels and one independent one on the Compute
// lane, download the results (Download lane) and check them against the CPU. The
// kernels are CUDA C++ (gpu_pipeline_kernels.cu) compiled to PTX when the project was
// built, and loaded with Runtime::load_gpu_kernel.
//
//   accord_gpu_pipeline_example [--connect SOCKET]
//
// Without a GPU (or without nvcc at build time) it says why and exits 0.
#include <accord/accord.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern const unsigned char accord_gpu_pipeline_ptx[];
extern const unsigned long accord_gpu_pipeline_ptx_size;

namespace {

int fail(const char* what, const accord::Status& status) {
  std::fprintf(stderr, "error: %s: %s\n", what, status.to_string().c_str());
  return 1;
}

#define CHECK_OK(var, expr, what)                                   \
  auto var##_result = (expr);                                       \
  if (!var##_result.ok()) return fail(what, var##_result.status()); \
  auto var = std::move(var##_result).value()

constexpr std::uint32_t kCount = 1 << 16;
constexpr std::size_t kBytes = kCount * sizeof(float);
constexpr std::uint32_t kBlock = 256;

accord::GpuKernelImage image(const char* entry) {
  accord::GpuKernelImage out;
  const auto* begin = reinterpret_cast<const std::byte*>(accord_gpu_pipeline_ptx);
  out.image.assign(begin, begin + accord_gpu_pipeline_ptx_size);
  out.image.push_back(std::byte{0});  // PTX is text: hand it over NUL-terminated
  out.entry = entry;
  out.grid = {(kCount + kBlock - 1) / kBlock, 1, 1};
  out.block = {kBlock, 1, 1};
  return out;
}

accord::BindingContract f32(accord::Access access) {
  return {kBytes, alignof(float), access, "f32[" + std::to_string(kCount) + "]"};
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--connect") && i + 1 < argc) socket = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--connect SOCKET]\n", argv[0]);
      return 2;
    }
  }
  CHECK_OK(runtime, socket.empty() ? accord::Runtime::embedded() : accord::Runtime::connect(socket),
           socket.empty() ? "starting the embedded runtime" : "connecting to accordd");

  // Which GPU, if any. Runtime::gpu says why there is none.
  auto gpu = runtime.gpu(0);
  if (!gpu.ok()) {
    std::printf("no GPU here: %s\n", std::string(gpu.status().message()).c_str());
    return 0;
  }
  if (gpu->state != accord::DeviceState::Present) {
    std::printf("no GPU here: gpu:0 is lost: %s\n", gpu->reason.c_str());
    return 0;
  }
  if (accord_gpu_pipeline_ptx_size == 0) {
    std::printf("no GPU kernels: nvcc was not found when this example was built\n");
    return 0;
  }
  std::printf("gpu:0: %s, %s, %.1f GiB (%.1f GiB free)\n", gpu->name.c_str(), gpu->target.c_str(),
              static_cast<double>(gpu->memory_total) / (1 << 30), static_cast<double>(gpu->memory_free) / (1 << 30));

  // Host inputs, mapped into this process.
  CHECK_OK(host_x, runtime.allocate(kBytes), "allocating host x");
  CHECK_OK(host_y, runtime.allocate(kBytes), "allocating host y");
  CHECK_OK(host_sum, runtime.allocate(kBytes), "allocating host sum");
  CHECK_OK(host_z, runtime.allocate(kBytes), "allocating host z");
  {
    CHECK_OK(wx, host_x.map_write(), "mapping x");
    CHECK_OK(wy, host_y.map_write(), "mapping y");
    for (std::uint32_t i = 0; i < kCount; ++i) {
      wx.as<float>()[i] = static_cast<float>(i % 1000) * 0.25f;
      wy.as<float>()[i] = 1.0f + static_cast<float>(i % 7);
    }
  }
  // GPU memory.
  const auto on_gpu = accord::MemoryPlacement::gpu_local(0);
  CHECK_OK(x, runtime.allocate(kBytes, on_gpu), "allocating x on the GPU");
  CHECK_OK(y, runtime.allocate(kBytes, on_gpu), "allocating y on the GPU");
  CHECK_OK(sum, runtime.allocate(kBytes, on_gpu), "allocating sum on the GPU");
  CHECK_OK(z, runtime.allocate(kBytes, on_gpu), "allocating z on the GPU");

  // Kernels with their contracts: binding pointers in order, then the constant bytes.
  accord::KernelContract add_contract;
  add_contract.bindings = {f32(accord::Access::Read), f32(accord::Access::Read), f32(accord::Access::Write)};
  accord::append_constant(add_contract.constants, kCount);
  CHECK_OK(add, runtime.load_gpu_kernel(0, image("accord_example_add_f32"), add_contract), "loading add_f32");
  accord::KernelContract saxpy_contract;
  saxpy_contract.bindings = {f32(accord::Access::Read), f32(accord::Access::ReadWrite)};
  accord::append_constant(saxpy_contract.constants, 2.0f);
  accord::append_constant(saxpy_contract.constants, kCount);
  CHECK_OK(saxpy, runtime.load_gpu_kernel(0, image("accord_example_saxpy_f32"), saxpy_contract), "loading saxpy");

  // The pipeline: ordering comes from the declared access only.
  accord::Graph graph = runtime.graph();
  CHECK_OK(n_up_x, graph.copy(x.view(), host_x.view()), "recording upload x");   // Upload lane
  CHECK_OK(n_up_y, graph.copy(y.view(), host_y.view()), "recording upload y");
  CHECK_OK(n_add, graph.gpu(add, {x.view(), y.view(), sum.view()}), "recording add");  // sum = x + y
  CHECK_OK(n_saxpy, graph.gpu(saxpy, {sum.view(), y.view()}), "recording saxpy");      // y = 2 sum + y (dependent)
  CHECK_OK(n_fill, graph.fill(z.view(), 0), "recording fill z");
  CHECK_OK(n_indep, graph.gpu(saxpy, {x.view(), z.view()}), "recording independent saxpy");  // z = 2 x
  CHECK_OK(n_down_sum, graph.copy(host_sum.view(), y.view()), "recording download");  // Download lane
  CHECK_OK(n_down_z, graph.copy(host_z.view(), z.view()), "recording download z");
  CHECK_OK(exe, std::move(graph).prepare(), "preparing");
  std::printf("prepared %zu nodes into %zu regions\n", exe.nodes(), exe.regions());
  for (std::size_t r = 0; r < exe.regions(); ++r) {
    const accord::RegionInfo& info = exe.region(r);
    std::printf("  region %zu on the %s lane: %zu node(s)\n", r, std::string(accord::to_string(info.lane)).c_str(),
                info.nodes.size());
  }
  (void)n_up_x, (void)n_up_y, (void)n_add, (void)n_saxpy, (void)n_fill, (void)n_indep, (void)n_down_sum,
      (void)n_down_z;

  if (auto s = runtime.start_trace(64); !s.ok()) return fail("starting the trace", s);
  CHECK_OK(done, exe.submit(), "submitting");
  if (auto s = done.wait(); !s.ok()) return fail("running the pipeline", s);
  if (auto trace = runtime.finish_trace())
    for (const accord::TraceEvent& e : trace->events)
      std::printf("  %s %s region: %.1f us (host-observed)\n", e.device.to_string().c_str(),
                  std::string(accord::to_string(e.lane)).c_str(), e.duration_us);

  CHECK_OK(r, host_sum.map_read(), "mapping the result");
  CHECK_OK(rz, host_z.map_read(), "mapping z");
  int wrong = 0;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const float xi = static_cast<float>(i % 1000) * 0.25f;
    const float yi = 1.0f + static_cast<float>(i % 7);
    const float expected = 2.0f * (xi + yi) + yi;
    if (std::fabs(r.as<float>()[i] - expected) > 1e-3f * std::fabs(expected) + 1e-5f) ++wrong;
    if (std::fabs(rz.as<float>()[i] - 2.0f * xi) > 1e-5f) ++wrong;
  }
  std::printf("result: %s (%d wrong of %u)\n", wrong ? "WRONG" : "correct", wrong, 2 * kCount);
  return wrong ? 1 : 0;
}
