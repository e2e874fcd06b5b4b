// Two-GPU benchmark (issue "Every GPU of the box"), side by side in one run:
//   1. copy bandwidth from gpu:0 to gpu:1 at 1, 16 and 256 MiB: Accord embedded (a
//      prepared graph of one copy, submit + wait) against cuMemcpyPeerAsync +
//      cuStreamSynchronize between plain allocations with peer access enabled.
//      Goal: Accord at least 0.95x the direct bandwidth at 256 MiB.
//   2. a pipeline across the two GPUs (produce on gpu:0, copy to gpu:1, consume there,
//      and a kernel on each GPU that depends on nothing), against the same graph with
//      every buffer and kernel on gpu:0. Each kernel fills its GPU for `--kernel-us`.
// With one GPU, table 1 copies gpu:0 -> gpu:0 (cuMemcpyDtoDAsync against Accord's
// device-local copy), so that its code runs for real, and table 2 says it needs two
// GPUs. Without a GPU it says why and exits 0. Prints tables; asserts nothing.
//   gpu_peer_bench [--iterations N] [--config copy|pipeline]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "accord/accord.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/gpu_bench_chains.h"

using namespace accord;
using namespace accord::bench;
using namespace accord::bench::gpu;

extern const unsigned long accord_gpu_bench_ptx_size;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

void cu_ok(const cu::CudaSymbols& cuda, CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuda.cuGetErrorName(r, &name);
  std::fprintf(stderr, "benchmark setup failed: %s: %s\n", what, name ? name : "?");
  std::exit(1);
}

// The direct baseline: two plain allocations (cuMemAlloc) on `src_gpu` and `dst_gpu`, a
// stream on the destination's primary context, peer access enabled both ways when the
// GPUs differ (as an application tuned for it would).
class DirectCopy {
 public:
  DirectCopy(const cu::CudaSymbols& cuda, int src_gpu, int dst_gpu, std::size_t bytes)
      : cuda_(cuda), src_gpu_(src_gpu), dst_gpu_(dst_gpu), bytes_(bytes) {
    ok(cuda.cuDeviceGet(&src_dev_, src_gpu), "cuDeviceGet");
    ok(cuda.cuDeviceGet(&dst_dev_, dst_gpu), "cuDeviceGet");
    ok(cuda.cuDevicePrimaryCtxRetain(&src_ctx_, src_dev_), "cuDevicePrimaryCtxRetain");
    ok(cuda.cuDevicePrimaryCtxRetain(&dst_ctx_, dst_dev_), "cuDevicePrimaryCtxRetain");
    ok(cuda.cuCtxSetCurrent(src_ctx_), "cuCtxSetCurrent");
    ok(cuda.cuMemAlloc(&src_, bytes), "cuMemAlloc (source)");
    ok(cuda.cuCtxSetCurrent(dst_ctx_), "cuCtxSetCurrent");
    ok(cuda.cuMemAlloc(&dst_, bytes), "cuMemAlloc (destination)");
    ok(cuda.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (src_gpu != dst_gpu) {
      // Already enabled (by an earlier size) is fine.
      const CUresult a = cuda.cuCtxEnablePeerAccess(src_ctx_, 0);
      if (a != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) ok(a, "cuCtxEnablePeerAccess (destination -> source)");
      ok(cuda.cuCtxSetCurrent(src_ctx_), "cuCtxSetCurrent");
      const CUresult b = cuda.cuCtxEnablePeerAccess(dst_ctx_, 0);
      if (b != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) ok(b, "cuCtxEnablePeerAccess (source -> destination)");
      ok(cuda.cuCtxSetCurrent(dst_ctx_), "cuCtxSetCurrent");
    }
  }
  ~DirectCopy() {
    cuda_.cuCtxSetCurrent(dst_ctx_);
    cuda_.cuStreamSynchronize(stream_);
    cuda_.cuStreamDestroy(stream_);
    cuda_.cuMemFree(dst_);
    cuda_.cuCtxSetCurrent(src_ctx_);
    cuda_.cuMemFree(src_);
    cuda_.cuDevicePrimaryCtxRelease(dst_dev_);
    cuda_.cuDevicePrimaryCtxRelease(src_dev_);
  }
  DirectCopy(const DirectCopy&) = delete;
  DirectCopy& operator=(const DirectCopy&) = delete;
  void ok(CUresult r, const char* what) const { cu_ok(cuda_, r, what); }

  void run_once() const {
    ok(cuda_.cuCtxSetCurrent(dst_ctx_), "cuCtxSetCurrent");
    if (src_gpu_ != dst_gpu_)
      ok(cuda_.cuMemcpyPeerAsync(dst_, dst_ctx_, src_, src_ctx_, bytes_, stream_), "cuMemcpyPeerAsync");
    else
      ok(cuda_.cuMemcpyDtoDAsync(dst_, src_, bytes_, stream_), "cuMemcpyDtoDAsync");
    ok(cuda_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

 private:
  const cu::CudaSymbols& cuda_;
  int src_gpu_, dst_gpu_;
  std::size_t bytes_;
  CUdevice src_dev_ = 0, dst_dev_ = 0;
  CUcontext src_ctx_ = nullptr, dst_ctx_ = nullptr;
  CUdeviceptr src_ = 0, dst_ = 0;
  CUstream stream_ = nullptr;
};

// The same copy through Accord: one prepared graph, submitted and waited for.
struct AccordCopy {
  Buffer src, dst;
  ExecutableGraph exe;
  AccordCopy(const Runtime& rt, int src_gpu, int dst_gpu, std::size_t bytes)
      : src(unwrap(rt.allocate(bytes, MemoryPlacement::gpu_local(src_gpu)), "allocate (source)")),
        dst(unwrap(rt.allocate(bytes, MemoryPlacement::gpu_local(dst_gpu)), "allocate (destination)")) {
    Graph graph = rt.graph();
    unwrap(graph.copy(dst.view(), src.view()), "Graph::copy");
    exe = unwrap(std::move(graph).prepare(), "prepare");
  }
  void run_once() const { check(unwrap(exe.submit(), "submit").wait(), "wait"); }
};

void copy_bandwidth(const cu::CudaSymbols& cuda, const Runtime& rt, int gpus, std::size_t iterations) {
  const int dst_gpu = gpus > 1 ? 1 : 0;
  std::printf("\n1. copy gpu:0 -> gpu:%d, submit -> complete (GB/s from the p50 time; %s)\n", dst_gpu,
              gpus > 1 ? "direct: cuMemcpyPeerAsync, peer access enabled"
                       : "ONE GPU: a device-local copy, only so that the code runs; direct: cuMemcpyDtoDAsync");
  std::printf("  %-8s %9s %12s %12s %12s %12s %10s\n", "MiB", "samples", "direct p50", "accord p50", "direct GB/s",
              "accord GB/s", "ratio");
  for (const std::size_t mib : {std::size_t{1}, std::size_t{16}, std::size_t{256}}) {
    const std::size_t bytes = mib * kMiB;
    // Fewer samples for larger copies, so that every size takes about as long.
    const std::size_t samples = std::max<std::size_t>(16, iterations / mib);
    DirectCopy direct(cuda, 0, dst_gpu, bytes);
    AccordCopy accord(rt, 0, dst_gpu, bytes);
    const auto [d, a] = interleaved(direct, accord, samples);
    const double direct_gbs = static_cast<double>(bytes) / (d.p50 * 1e3);
    const double accord_gbs = static_cast<double>(bytes) / (a.p50 * 1e3);
    std::printf("  %-8zu %9zu %12.1f %12.1f %12.2f %12.2f %10.3f\n", mib, samples, d.p50, a.p50, direct_gbs,
                accord_gbs, accord_gbs / direct_gbs);
  }
  std::printf("  (p50 in us; ratio = accord GB/s / direct GB/s; goal at 256 MiB: at least 0.95)\n");
}

// produce(gpu a) -> copy to gpu b -> consume(gpu b), and a kernel on each of a and b that
// depends on nothing; every kernel fills its GPU for `kernel_ns`.
struct Pipeline {
  ExecutableGraph exe;
  std::vector<Buffer> keep;
  Pipeline(const Runtime& rt, const std::vector<Kernel>& kernels, int a, int b, std::size_t copy_bytes) {
    auto buffer = [&](int gpu, std::size_t bytes) {
      keep.push_back(unwrap(rt.allocate(bytes, MemoryPlacement::gpu_local(gpu)), "allocate"));
      return keep.back();
    };
    auto first = [](const Buffer& buf) { return unwrap(buf.slice(0, 4), "slice"); };
    const Buffer seed = buffer(a, 256), produced = buffer(a, copy_bytes), moved = buffer(b, copy_bytes);
    const Buffer consumed = buffer(b, 256), side_a_in = buffer(a, 256), side_a_out = buffer(a, 256);
    const Buffer side_b_in = buffer(b, 256), side_b_out = buffer(b, 256);
    const Kernel& on_a = kernels[static_cast<std::size_t>(a)];
    const Kernel& on_b = kernels[static_cast<std::size_t>(b)];
    Graph graph = rt.graph();
    unwrap(graph.gpu(on_a, {first(produced), first(seed)}), "produce");
    unwrap(graph.copy(moved.view(), produced.view()), "copy");
    unwrap(graph.gpu(on_b, {first(consumed), first(moved)}), "consume");
    unwrap(graph.gpu(on_b, {first(side_b_out), first(side_b_in)}), "independent on b");
    unwrap(graph.gpu(on_a, {first(side_a_out), first(side_a_in)}), "independent on a");
    exe = unwrap(std::move(graph).prepare(), "prepare");
  }
  void run_once() const { check(unwrap(exe.submit(), "submit").wait(), "wait"); }
};

void pipeline(const cu::CudaSymbols& cuda, const Runtime& rt, int gpus, std::size_t iterations,
              std::uint64_t kernel_ns) {
  std::printf("\n2. a pipeline over two GPUs against the same graph on one GPU (%.0f us kernels that fill the GPU, "
              "a 16 MiB copy)\n", static_cast<double>(kernel_ns) / 1e3);
  if (gpus < 2) {
    std::printf("  (needs two GPUs, found %d: not run)\n", gpus);
    return;
  }
  CUdevice device = 0;
  int sms = 0;
  cu_ok(cuda, cuda.cuDeviceGet(&device, 0), "cuDeviceGet");
  cu_ok(cuda, cuda.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
  // Two resident blocks of 1,024 threads per SM: one full wave, so two kernels on one GPU
  // take twice as long as one.
  GpuKernelImage image;
  image.image = ptx();
  image.entry = "accord_bench_step";
  image.grid = {static_cast<std::uint32_t>(2 * sms), 1, 1};
  image.block = {1024, 1, 1};
  std::vector<Kernel> kernels;
  for (int g = 0; g < 2; ++g) kernels.push_back(unwrap(rt.load_gpu_kernel(g, image, step_contract(kernel_ns)), "load"));
  Pipeline two(rt, kernels, 0, 1, 16 * kMiB);
  Pipeline one(rt, kernels, 0, 0, 16 * kMiB);
  const auto [t, o] = interleaved(two, one, iterations);
  std::printf("  %-34s %12s %12s\n", "how", "p50 us", "p99 us");
  std::printf("  %-34s %12.1f %12.1f\n", "gpu:0 -> gpu:1 (two GPUs)", t.p50, t.p99);
  std::printf("  %-34s %12.1f %12.1f\n", "everything on gpu:0", o.p50, o.p99);
  std::printf("  one GPU / two GPUs at p50: %.2fx\n", o.p50 / t.p50);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Flags flags = parse_flags(argc, argv, "  --config copy|pipeline (default: both)\n");
  if (accord_gpu_bench_ptx_size == 0) {
    std::printf("gpu_peer_bench: no GPU kernels: nvcc was not found when this was built\n");
    return 0;
  }
  auto cuda = cu::CudaSymbols::load();
  if (!cuda.ok()) {
    std::printf("gpu_peer_bench: no GPU here: %s\n", cuda.status().to_string().c_str());
    return 0;
  }
  if (cuda.value()->cuMemcpyPeerAsync == nullptr || cuda.value()->cuCtxEnablePeerAccess == nullptr ||
      cuda.value()->cuMemcpyDtoDAsync == nullptr || cuda.value()->cuMemAlloc == nullptr) {
    std::printf("gpu_peer_bench: this driver lacks the direct copy calls the baseline needs\n");
    return 0;
  }
  const Runtime rt = open_runtime(0, {});
  auto gpu0 = rt.gpu(0);
  if (!gpu0.ok()) {
    std::printf("gpu_peer_bench: no GPU here: %s\n", gpu0.status().to_string().c_str());
    return 0;
  }
  const int gpus = rt.gpu(1).ok() ? 2 : 1;
  std::printf("gpu_peer_bench: %d GPU(s); gpu:0 is %s (%s), driver %d\n", gpus, gpu0->name.c_str(),
              gpu0->target.c_str(), cuda.value()->driver_version());
  if (gpus > 1) {
    CUdevice d0 = 0, d1 = 0;
    int can = 0;
    cu_ok(*cuda.value(), cuda.value()->cuDeviceGet(&d0, 0), "cuDeviceGet");
    cu_ok(*cuda.value(), cuda.value()->cuDeviceGet(&d1, 1), "cuDeviceGet");
    cu_ok(*cuda.value(), cuda.value()->cuDeviceCanAccessPeer(&can, d1, d0), "cuDeviceCanAccessPeer");
    std::printf("gpu:1 %s reach gpu:0's memory directly (peer access)\n", can ? "can" : "CANNOT");
  }
  const std::size_t iterations = flags.iterations ? flags.iterations : 1'024;
  if (flags.config.empty() || flags.config == "copy") copy_bandwidth(*cuda.value(), rt, gpus, iterations);
  if (flags.config.empty() || flags.config == "pipeline") pipeline(*cuda.value(), rt, gpus, iterations / 4, 200'000);
  print_machine_line();
  return 0;
}
