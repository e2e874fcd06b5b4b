// gpu_npu_bench (issue 8): GPU and NPU work overlapping in one Accord graph. One embedded
// runtime with the GPU (CUDA backend) and the NPU emulator; two independent halves:
//   GPU  a chain of 10 kernels (accord_bench_step, gpu_bench_kernels.cu) that spin on the
//        GPU's timer, about as long in total as the NPU half;
//   NPU  an n x n matmul on the emulator, n the smallest size taking >= --target-us.
// "parallel" submits one graph holding both halves (the engine runs them at once: they share
// no buffer); "sequential" submits the GPU half's graph, waits, then the NPU half's and
// waits, as without a graph spanning devices. Prints the p50 of each and the speed-up
// (sequential / parallel). Without a GPU, or without the emulator, it says why and exits 0.
//   gpu_npu_bench [--iterations N] [--target-us US]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "accord/accord.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/npu_bench_programs.h"

extern const unsigned char accord_gpu_npu_bench_ptx[];
extern const unsigned long accord_gpu_npu_bench_ptx_size;

using namespace accord;
using namespace accord::bench;

namespace {

constexpr std::size_t kGpuKernels = 10;
constexpr int kRounds = 5;  // alternating blocks of sequential and parallel samples

struct OverlapFlags {
  std::size_t iterations = 1000;
  double target_us = 1500;
};

OverlapFlags parse_overlap_flags(int argc, char** argv) {
  OverlapFlags flags;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      flags.iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--target-us") == 0 && has_value) {
      flags.target_us = std::strtod(argv[++i], nullptr);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--iterations N] [--target-us US]\n"
                   "  --iterations N  samples of each of sequential and parallel (default 1000)\n"
                   "  --target-us US  how long each half should take, about (default 1500)\n",
                   argv[0]);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
  }
  if (flags.iterations < static_cast<std::size_t>(kRounds)) flags.iterations = kRounds;
  return flags;
}

void run_and_wait(const ExecutableGraph& exe) {
  Completion completion = unwrap(exe.submit(), "submit");
  check(completion.wait(), "wait");
}

template <class Fn>
double median_us(std::size_t runs, Fn&& fn) {
  std::vector<double> samples;
  for (std::size_t i = 0; i < runs; ++i) {
    const Clock::time_point begin = Clock::now();
    fn();
    samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  return summarize(samples).p50;
}

// --- the NPU half ------------------------------------------------------------------------

struct NpuHalf {
  NpuBenchProgram program;
  Kernel kernel;
  Buffer a, b, c;

  NpuHalf(const Runtime& runtime, std::size_t n) : program(npu_matmul_program(n)) {
    a = unwrap(runtime.allocate(program.bytes(), MemoryPlacement::shared(0)), "allocate a");
    b = unwrap(runtime.allocate(program.bytes(), MemoryPlacement::shared(0)), "allocate b");
    c = unwrap(runtime.allocate(program.bytes(), MemoryPlacement::shared(0)), "allocate c");
    for (auto [buffer, value] : {std::pair{a, program.a_value}, std::pair{b, program.b_value}}) {
      WriteGuard guard = unwrap(buffer.map_write(), "map_write");
      for (float& x : guard.as<float>()) x = value;
    }
    kernel = unwrap(runtime.load_npu_program(0, program.blob(), program.label, program.contract()), "load_npu_program");
  }
  void record(Graph& graph) const { unwrap(graph.npu(kernel, {a.view(), b.view(), c.view()}), "Graph::npu"); }
  void clear_output() const {
    WriteGuard guard = unwrap(c.map_write(), "map_write c");
    for (float& x : guard.as<float>()) x = 0.0f;
  }
  bool verify() const {
    ReadGuard guard = unwrap(c.map_read(), "map_read c");
    for (float x : guard.as<float>())
      if (x != program.expected) return false;
    return true;
  }
};

// The smallest matmul from a fixed ladder whose NPU-only graph takes at least `target_us`
// (median of a few runs), or the largest of the ladder.
std::size_t pick_matmul_size(const Runtime& runtime, double target_us, double& measured_us) {
  for (std::size_t n : {64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512}) {
    NpuHalf half(runtime, n);
    Graph graph = runtime.graph();
    half.record(graph);
    const ExecutableGraph exe = unwrap(std::move(graph).prepare(), "prepare the NPU half");
    run_and_wait(exe);
    measured_us = median_us(7, [&] { run_and_wait(exe); });
    if (measured_us >= target_us || n == 512) return n;
  }
  return 512;
}

// --- the GPU half ------------------------------------------------------------------------

struct GpuHalf {
  Kernel kernel;
  std::vector<Buffer> buffers;  // kGpuKernels + 1 links of the chain, GpuLocal(0)

  GpuHalf(const Runtime& runtime, std::uint64_t spin_ns) {
    GpuKernelImage image;
    const auto* ptx = reinterpret_cast<const std::byte*>(accord_gpu_npu_bench_ptx);
    image.image.assign(ptx, ptx + accord_gpu_npu_bench_ptx_size);
    image.entry = "accord_bench_step";
    image.grid = {1, 1, 1};
    image.block = {32, 1, 1};
    KernelContract contract;
    contract.bindings = {BindingContract{4, 4, Access::Write, "out f32[1]"},
                         BindingContract{4, 4, Access::Read, "in f32[1]"}};
    contract.constants.resize(sizeof spin_ns);
    std::memcpy(contract.constants.data(), &spin_ns, sizeof spin_ns);
    kernel = unwrap(runtime.load_gpu_kernel(0, image, contract), "load_gpu_kernel");
    for (std::size_t i = 0; i <= kGpuKernels; ++i)
      buffers.push_back(unwrap(runtime.allocate(256, MemoryPlacement::gpu_local(0)), "allocate"));
  }
  void record(Graph& graph) const {
    for (std::size_t i = 0; i < kGpuKernels; ++i)
      unwrap(graph.gpu(kernel, {unwrap(buffers[i + 1].slice(0, 4), "slice"), unwrap(buffers[i].slice(0, 4), "slice")}),
             "Graph::gpu");
  }
};

ExecutableGraph prepare_with(const Runtime& runtime, const GpuHalf* gpu, const NpuHalf* npu) {
  Graph graph = runtime.graph();
  if (gpu) gpu->record(graph);
  if (npu) npu->record(graph);
  return unwrap(std::move(graph).prepare(), "prepare");
}

void print_row(const char* name, std::vector<double>& samples) {
  const Summary s = summarize(samples);
  std::printf("  %-36s %10.1f %10.1f %10.1f %10.1f\n", name, s.p50, s.p90, s.p99, s.mean);
}

}  // namespace

// Progress on stderr: a run that stalls shows where.
void progress(const char* what) {
  std::fprintf(stderr, "gpu_npu_bench: %s\n", what);
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the table is out before teardown starts
  const OverlapFlags flags = parse_overlap_flags(argc, argv);
  if (accord_gpu_npu_bench_ptx_size == 0) {
    std::printf("gpu_npu_bench: no GPU kernels: nvcc was not found when this was built\n");
    return 0;
  }
  RuntimeOptions options;
  options.npu_emulator = true;
  options.devices = {"cuda", "level_zero"};
  Result<Runtime> opened = Runtime::embedded(options);
  if (!opened.ok()) {
    std::printf("gpu_npu_bench: no NPU emulator: %s\n", opened.status().to_string().c_str());
    return 0;
  }
  const Runtime runtime = std::move(opened).value();
  const Result<DeviceInfo> gpu = runtime.gpu(0);
  if (!gpu.ok() || gpu->state != DeviceState::Present) {
    std::printf("gpu_npu_bench: no GPU here: %s\n",
                gpu.ok() ? gpu->reason.c_str() : gpu.status().to_string().c_str());
    return 0;
  }
  const Result<DeviceInfo> npu = runtime.npu(0);
  if (!npu.ok() || npu->state != DeviceState::Present) {
    std::printf("gpu_npu_bench: no NPU emulator: %s\n",
                npu.ok() ? npu->reason.c_str() : npu.status().to_string().c_str());
    return 0;
  }

  progress("sizing the NPU half");
  double npu_alone_us = 0;
  const std::size_t n = pick_matmul_size(runtime, flags.target_us, npu_alone_us);
  const NpuHalf npu_half(runtime, n);
  // The GPU chain is made as long as the NPU half measured, so neither half hides the other.
  const auto spin_ns = static_cast<std::uint64_t>(npu_alone_us * 1000.0 / kGpuKernels);
  const GpuHalf gpu_half(runtime, spin_ns);
  const ExecutableGraph gpu_only = prepare_with(runtime, &gpu_half, nullptr);
  const ExecutableGraph npu_only = prepare_with(runtime, nullptr, &npu_half);
  const ExecutableGraph both = prepare_with(runtime, &gpu_half, &npu_half);

  progress("measuring");
  std::vector<double> sequential, parallel, gpu_part, npu_part;
  const std::size_t block = flags.iterations / kRounds;
  for (int round = 0; round < kRounds; ++round) {
    const std::size_t samples = round + 1 == kRounds ? flags.iterations - block * (kRounds - 1) : block;
    for (std::size_t i = 0; i < (round == 0 ? 20u : 2u); ++i) {
      run_and_wait(gpu_only);
      run_and_wait(npu_only);
      run_and_wait(both);
    }
    for (std::size_t i = 0; i < samples; ++i) {
      const Clock::time_point t0 = Clock::now();
      run_and_wait(gpu_only);
      const Clock::time_point t1 = Clock::now();
      run_and_wait(npu_only);
      const Clock::time_point t2 = Clock::now();
      sequential.push_back(elapsed_ns(t0, t2) / 1000.0);
      gpu_part.push_back(elapsed_ns(t0, t1) / 1000.0);
      npu_part.push_back(elapsed_ns(t1, t2) / 1000.0);
    }
    for (std::size_t i = 0; i < samples; ++i) {
      const Clock::time_point t0 = Clock::now();
      run_and_wait(both);
      parallel.push_back(elapsed_ns(t0, Clock::now()) / 1000.0);
    }
  }
  npu_half.clear_output();
  run_and_wait(both);
  const bool verified = npu_half.verify();

  std::printf("gpu_npu_bench: one embedded runtime, %s and %s\n", gpu->name.c_str(), npu->name.c_str());
  std::printf("  GPU half: %zu chained kernels of 1 block x 32 threads spinning %.1f us each on the GPU timer\n",
              kGpuKernels, static_cast<double>(spin_ns) / 1000.0);
  std::printf("  NPU half: matmul %zu x %zu x %zu on the emulator (the smallest of the ladder taking >= %.0f us:\n",
              n, n, n, flags.target_us);
  std::printf("            %.1f us alone when picked); Shared(0) buffers, independent of the GPU half\n",
              npu_alone_us);
  std::printf("  %zu samples each, in %d alternating blocks; times in us, wall clock, submit -> wait\n\n",
              flags.iterations, kRounds);
  std::printf("  %-36s %10s %10s %10s %10s\n", "", "p50", "p90", "p99", "mean");
  print_row("GPU half alone (its own graph)", gpu_part);
  print_row("NPU half alone (its own graph)", npu_part);
  const double sequential_p50 = summarize(sequential).p50;
  const double parallel_p50 = summarize(parallel).p50;
  const double ideal = (summarize(gpu_part).p50 + summarize(npu_part).p50) /
                       std::max(summarize(gpu_part).p50, summarize(npu_part).p50);
  print_row("sequential: GPU graph, then NPU graph", sequential);
  print_row("parallel: one graph with both halves", parallel);
  std::printf("\n  speed-up (sequential p50 / parallel p50): %.3fx (perfect overlap of these halves: %.3fx)\n",
              sequential_p50 / parallel_p50, ideal);
  print_machine_line();
  if (!verified) {
    std::fprintf(stderr, "the NPU half's output was not the matmul's result\n");
    return 1;
  }
  progress("tearing down");
  return 0;
}
