// GPU benchmark (issue "CUDA backend"), side by side in one run on one GPU:
//   1. submit -> complete of a chain of 1, 10 and 100 small kernels: the same kernels as a
//      CUDA graph launched directly in this process (cuGraphLaunch + cuStreamSynchronize)
//      against Accord embedded (ExecutableGraph::submit + wait);
//   2. 16 tenants, each its own embedded runtime on its own thread, looping a 10-kernel
//      graph of 2 us kernels: aggregate graphs per second (and the same 16 threads each
//      launching the graph directly on its own stream of one context);
//   3. noisy neighbour: one low-priority tenant saturating every SM, three high-priority
//      tenants timing a 1-kernel graph (and the same with every priority 0).
//   4. (--config processes:LABEL) the same 16 tenants as 16 processes, each launching the
//      graph directly on its own context: run once plainly (time-sliced) and once under
//      MPS (tests/bench/gpu_tenants.sh starts and stops the MPS control daemon), so the
//      processes rows come from the same run as the others.
// Prints a table; asserts nothing. Without a GPU it says why and exits 0.
//   gpu_graph_bench [--iterations N] [--config NAME]
//   NAME: latency (with parts), parts (1b only: Accord's completion tail taken apart on
//   the direct chain), tenants or tenants:ROW (one row or group: direct, flag, event,
//   green, accord, accord-event, accord-1stream), neighbour, or processes:LABEL (the parent of 16 tenant
//   processes; it never opens CUDA itself, so MPS settings in its environment reach only
//   the children)
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accord/accord.h"
#include "daemon/devices/cuda/cuda_symbols.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/daemon_process.h"

extern char** environ;
extern const unsigned char accord_gpu_bench_ptx[];
extern const unsigned long accord_gpu_bench_ptx_size;

using namespace accord;
using namespace accord::bench;
namespace cu = accord::devices::cuda;

namespace {

constexpr std::uint64_t kTwoMicroseconds = 2'000;
constexpr std::uint64_t kNeighbourSpin = 50'000;

std::vector<std::byte> ptx() {
  const auto* p = reinterpret_cast<const std::byte*>(accord_gpu_bench_ptx);
  return {p, p + accord_gpu_bench_ptx_size};
}

KernelContract step_contract(std::uint64_t spin_ns) {
  KernelContract contract;
  contract.bindings = {BindingContract{4, 4, Access::Write, "out f32[1]"}, BindingContract{4, 4, Access::Read, "in f32[1]"}};
  contract.constants.resize(sizeof spin_ns);
  std::memcpy(contract.constants.data(), &spin_ns, sizeof spin_ns);
  return contract;
}

// --- direct: the same chain as a CUDA graph, through the driver API ---------------------
// What ends the direct graph (to take Accord's completion tail apart): nothing; a node
// writing a pinned host flag (as Accord's tail does); that node and an event record.
enum class DirectTail { None, Flag, FlagEvent };
// How the direct run waits: cuStreamSynchronize, a spin on the host flag, or an event
// recorded after the launch and queried in a loop.
enum class DirectWait { Sync, SpinOnFlag, SpinOnEvent };

class DirectChain {
 public:
  DirectChain(const cu::CudaSymbols& cuda, std::size_t kernels, std::uint64_t spin_ns, std::array<unsigned, 3> grid,
              std::array<unsigned, 3> block, int priority, DirectTail tail = DirectTail::None,
              DirectWait wait = DirectWait::Sync, CUgreenCtx green = nullptr)
      : cuda_(cuda), wait_(wait), green_(green) {
    CUdevice device = 0;
    ok(cuda.cuDeviceGet(&device, 0), "cuDeviceGet");
    if (green != nullptr)
      ok(cuda.cuCtxFromGreenCtx(&context_, green), "cuCtxFromGreenCtx");
    else
      ok(cuda.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
    ok(cuda.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    const std::vector<std::byte> image = ptx();
    std::vector<char> text(reinterpret_cast<const char*>(image.data()), reinterpret_cast<const char*>(image.data()) + image.size());
    text.push_back('\0');
    ok(cuda.cuModuleLoadDataEx(&module_, text.data(), 0, nullptr, nullptr), "cuModuleLoadDataEx");
    ok(cuda.cuModuleGetFunction(&function_, module_, "accord_bench_step"), "cuModuleGetFunction");
    ok(cuda.cuMemAlloc(&buffers_, (kernels + 1) * 256), "cuMemAlloc");
    ok(cuda.cuGraphCreate(&graph_, 0), "cuGraphCreate");
    CUgraphNode previous = nullptr;
    params_.resize(kernels);
    for (std::size_t i = 0; i < kernels; ++i) {
      params_[i] = {buffers_ + (i + 1) * 256, buffers_ + i * 256, spin_ns};
      void* args[] = {&params_[i].out, &params_[i].in, &params_[i].spin};
      CUDA_KERNEL_NODE_PARAMS node{};
      node.func = function_;
      node.gridDimX = grid[0];
      node.gridDimY = grid[1];
      node.gridDimZ = grid[2];
      node.blockDimX = block[0];
      node.blockDimY = block[1];
      node.blockDimZ = block[2];
      node.kernelParams = args;
      CUgraphNode added = nullptr;
      ok(cuda.cuGraphAddKernelNode(&added, graph_, previous ? &previous : nullptr, previous ? 1 : 0, &node),
         "cuGraphAddKernelNode");
      previous = added;
    }
    if (tail != DirectTail::None) {
      void* host = nullptr;
      ok(cuda.cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
      flag_ = static_cast<std::atomic<std::uint32_t>*>(host);
      flag_->store(0);
      CUdeviceptr device_flag = 0;
      ok(cuda.cuMemHostGetDevicePointer(&device_flag, host, 0), "cuMemHostGetDevicePointer");
      CUstreamBatchMemOpParams op{};
      op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
      op.writeValue.address = device_flag;
      op.writeValue.value = 1;
      op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
      CUDA_BATCH_MEM_OP_NODE_PARAMS write{};
      write.ctx = context_;
      write.count = 1;
      write.paramArray = &op;
      CUgraphNode written = nullptr;
      ok(cuda.cuGraphAddBatchMemOpNode(&written, graph_, previous ? &previous : nullptr, previous ? 1 : 0, &write),
         "cuGraphAddBatchMemOpNode");
      if (tail == DirectTail::FlagEvent) {
        ok(cuda.cuEventCreate(&event_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        CUgraphNode recorded = nullptr;
        ok(cuda.cuGraphAddEventRecordNode(&recorded, graph_, &written, 1, event_), "cuGraphAddEventRecordNode");
      }
    }
    ok(cuda.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
    if (wait == DirectWait::SpinOnEvent) ok(cuda.cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (green != nullptr)
      ok(cuda.cuGreenCtxStreamCreate(&stream_, green, CU_STREAM_NON_BLOCKING, priority), "cuGreenCtxStreamCreate");
    else
      ok(cuda.cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, priority), "cuStreamCreateWithPriority");
  }
  ~DirectChain() {
    cuda_.cuCtxSetCurrent(context_);
    cuda_.cuStreamSynchronize(stream_);
    cuda_.cuStreamDestroy(stream_);
    cuda_.cuGraphExecDestroy(exec_);
    cuda_.cuGraphDestroy(graph_);
    if (event_ != nullptr) cuda_.cuEventDestroy(event_);
    if (done_ != nullptr) cuda_.cuEventDestroy(done_);
    if (flag_ != nullptr) cuda_.cuMemFreeHost(flag_);
    cuda_.cuMemFree(buffers_);
    cuda_.cuModuleUnload(module_);
    if (green_ != nullptr) {
      cuda_.cuGreenCtxDestroy(green_);
      return;
    }
    CUdevice device = 0;
    cuda_.cuDeviceGet(&device, 0);
    cuda_.cuDevicePrimaryCtxRelease(device);
  }

  void bind_thread() const { ok(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }
  void run_once() const {
    if (wait_ == DirectWait::SpinOnFlag) {
      flag_->store(0, std::memory_order_relaxed);
      ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
      while (flag_->load(std::memory_order_acquire) == 0) {
      }
      return;
    }
    if (wait_ == DirectWait::SpinOnEvent) {
      ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
      ok(cuda_.cuEventRecord(done_, stream_), "cuEventRecord");
      CUresult r = CUDA_ERROR_NOT_READY;
      while ((r = cuda_.cuEventQuery(done_)) == CUDA_ERROR_NOT_READY) {
      }
      ok(r, "cuEventQuery");
      return;
    }
    ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
    ok(cuda_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

 private:
  void ok(CUresult r, const char* what) const {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    cuda_.cuGetErrorName(r, &name);
    std::fprintf(stderr, "benchmark setup failed: %s: %s\n", what, name ? name : "?");
    std::exit(1);
  }
  struct Params {
    CUdeviceptr out, in;
    unsigned long long spin;
  };
  const cu::CudaSymbols& cuda_;
  DirectWait wait_;
  CUgreenCtx green_ = nullptr;  // owned: destroyed with the chain
  std::atomic<std::uint32_t>* flag_ = nullptr;
  CUevent event_ = nullptr;
  CUevent done_ = nullptr;  // SpinOnEvent
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUdeviceptr buffers_ = 0;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  CUstream stream_ = nullptr;
  std::vector<Params> params_;
};

// --- Accord: the same chain through an embedded runtime ---------------------------------
using DeviceOptions = std::map<std::string, std::string>;

Runtime open_runtime(int priority, const DeviceOptions& device_options, const std::string& executor = {}) {
  RuntimeOptions options;
  options.priority = priority;
  options.devices = {"cuda"};
  options.device_options = device_options;
  options.gpu_executor = executor;
  return unwrap(Runtime::embedded(options), "Runtime::embedded");
}

struct AccordChain {
  Runtime runtime;
  std::vector<Buffer> buffers;
  Kernel kernel;
  ExecutableGraph exe;

  AccordChain(std::size_t kernels, std::uint64_t spin_ns, std::array<std::uint32_t, 3> grid,
              std::array<std::uint32_t, 3> block, int priority, const DeviceOptions& device_options = {},
              const std::string& executor = {})
      : AccordChain(open_runtime(priority, device_options, executor), kernels, spin_ns, grid, block) {}
  // On `opened`: an embedded runtime, or one connected to accordd.
  AccordChain(Runtime opened, std::size_t kernels, std::uint64_t spin_ns, std::array<std::uint32_t, 3> grid,
              std::array<std::uint32_t, 3> block)
      : runtime(std::move(opened)) {
    GpuKernelImage image;
    image.image = ptx();
    image.entry = "accord_bench_step";
    image.grid = grid;
    image.block = block;
    kernel = unwrap(runtime.load_gpu_kernel(0, image, step_contract(spin_ns)), "load_gpu_kernel");
    for (std::size_t i = 0; i <= kernels; ++i)
      buffers.push_back(unwrap(runtime.allocate(256, MemoryPlacement::gpu_local(0)), "allocate"));
    Graph graph = runtime.graph();
    for (std::size_t i = 0; i < kernels; ++i)
      unwrap(graph.gpu(kernel, {unwrap(buffers[i + 1].slice(0, 4), "slice"), unwrap(buffers[i].slice(0, 4), "slice")}),
             "Graph::gpu");
    exe = unwrap(std::move(graph).prepare(), "prepare");
  }
  void run_once() const {
    Completion c = unwrap(exe.submit(), "submit");
    check(c.wait(), "wait");
    if (profiles != nullptr)
      if (std::optional<CompletionProfile> p = c.profile()) profiles->push_back(p->elapsed_us);
  }
  // When set, run_once() keeps each submission's accepted -> terminal time as the runtime
  // (accordd, for a connected one) measured it.
  std::vector<double>* profiles = nullptr;
};

template <class Fn>
std::vector<double> time_samples_us(std::size_t iterations, Fn&& fn) {
  std::vector<double> samples(iterations);
  for (std::size_t i = 0; i < iterations; ++i) {
    const auto begin = Clock::now();
    fn();
    samples[i] = elapsed_ns(begin, Clock::now()) / 1000.0;
  }
  return samples;
}

template <class Fn>
Summary time_us(std::size_t warmup, std::size_t iterations, Fn&& fn) {
  for (std::size_t i = 0; i < warmup; ++i) fn();
  std::vector<double> samples = time_samples_us(iterations, fn);
  return summarize(samples);
}

void latency(const cu::CudaSymbols& cuda, std::size_t iterations) {
  std::printf("\n1. submit -> complete of a chain of small kernels (us; %zu samples each)\n", iterations);
  std::printf("  %-8s %12s %12s %12s %12s %10s\n", "kernels", "direct p50", "direct p99", "accord p50", "accord p99",
              "ratio p50");
  for (std::size_t kernels : {1, 10, 100}) {
    DirectChain direct(cuda, kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    AccordChain accord(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    direct.bind_thread();
    const std::size_t n = kernels == 100 ? iterations / 4 : iterations;
    // Interleaved blocks, so drift on the machine touches both sides alike.
    std::vector<double> d_samples, a_samples;
    for (int round = 0; round < 4; ++round) {
      Summary d = time_us(50, n / 4, [&] { direct.run_once(); });
      Summary a = time_us(50, n / 4, [&] { accord.run_once(); });
      (void)d;
      (void)a;
    }
    const Summary d = time_us(100, n, [&] { direct.run_once(); });
    const Summary a = time_us(100, n, [&] { accord.run_once(); });
    std::printf("  %-8zu %12.2f %12.2f %12.2f %12.2f %10.3f\n", kernels, d.p50, d.p99, a.p50, a.p99, a.p50 / d.p50);
  }
}

// Times `first` and `second` in 8 alternating rounds (50 unmeasured runs of each before
// every round), so drift on the machine touches both alike; `iterations` samples each.
template <class First, class Second>
std::pair<Summary, Summary> interleaved(const First& first, const Second& second, std::size_t iterations) {
  std::vector<double> a_samples, b_samples;
  for (int round = 0; round < 8; ++round) {
    for (std::size_t i = 0; i < 50; ++i) first.run_once(), second.run_once();
    auto a = time_samples_us(iterations / 8, [&] { first.run_once(); });
    auto b = time_samples_us(iterations / 8, [&] { second.run_once(); });
    a_samples.insert(a_samples.end(), a.begin(), a.end());
    b_samples.insert(b_samples.end(), b.begin(), b.end());
  }
  return {summarize(a_samples), summarize(b_samples)};
}

// The hop to a GPU executor (issue 10): the same Accord chain with the GPU driven in this
// process and in an executor process (accordd --gpu-executor, through shared-memory
// rings), interleaved in rounds. Goal: at most 1 us added at p50.
void executor_latency(std::size_t iterations) {
  std::printf("\n1c. submit -> complete through a GPU executor process against the GPU in process "
              "(us; %zu samples each)\n", iterations);
  std::printf("  %-8s %14s %14s %14s %14s %12s\n", "kernels", "in-proc p50", "in-proc p99", "executor p50",
              "executor p99", "added p50");
  for (std::size_t kernels : {1, 10}) {
    AccordChain local(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    AccordChain remote(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, {}, ACCORD_BENCH_ACCORDD);
    const auto [l, r] = interleaved(local, remote, iterations);
    std::printf("  %-8zu %14.2f %14.2f %14.2f %14.2f %12.2f\n", kernels, l.p50, l.p99, r.p50, r.p99, r.p50 - l.p50);
  }
}

// Issue 9's GPU rows: the same chains through the real accordd (a client process over the
// submission ring, its waiter spinning), against the chain launched directly in this
// process, interleaved in rounds. With `executors` accordd drives the GPU from an executor
// process (its default); without, in its own process (--gpu-executors=false).
void daemon_latency(const cu::CudaSymbols& cuda, std::size_t iterations, bool executors) {
  if (std::string(ACCORD_BENCH_ACCORDD).empty()) {
    std::printf("\n1d. (no accordd in this build: no daemon rows)\n");
    return;
  }
  unsetenv("ACCORD_SESSION_SOCKET");  // Runtime::connect must find the spawned daemon's channel
  std::vector<std::string> args;
  if (!executors) args.push_back("--gpu-executors=false");
  bench::DaemonProcess accordd(ACCORD_BENCH_ACCORDD, args);
  std::printf("\n1d. submit -> complete through accordd (%s; ring, spinning waiter) against direct in process "
              "(us; %zu samples each)\n",
              executors ? "GPU in an executor process" : "GPU in accordd's process", iterations);
  std::printf("  %-8s %12s %12s %12s %12s %10s %14s\n", "kernels", "direct p50", "direct p99", "accordd p50",
              "accordd p99", "ratio p50", "inside p50");
  RuntimeOptions options;
  options.ring_spin = std::chrono::seconds(1);
  for (std::size_t kernels : {1, 10}) {
    DirectChain direct(cuda, kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    AccordChain remote(unwrap(Runtime::connect(accordd.grpc_socket(), options), "Runtime::connect"), kernels, 0,
                       {1, 1, 1}, {32, 1, 1});
    std::vector<double> inside;
    inside.reserve(iterations + 1000);
    remote.profiles = &inside;
    direct.bind_thread();
    const auto [d, a] = interleaved(direct, remote, iterations);
    std::printf("  %-8zu %12.2f %12.2f %12.2f %12.2f %10.3f %14.2f\n", kernels, d.p50, d.p99, a.p50, a.p99,
                a.p50 / d.p50, summarize(inside).p50);
  }
  std::printf("  (inside: accepted -> terminal as accordd measured it, from each completion's profile;\n"
              "   the rest of the accordd column is the ring's crossings and the client)\n");
}

// Where Accord's extra time goes: the direct chain with Accord's completion tail added
// node by node, waited for by cuStreamSynchronize or by spinning on the flag, beside
// Accord with and without the event node. All rows interleaved in rounds.
void latency_parts(const cu::CudaSymbols& cuda, std::size_t iterations) {
  std::printf("\n1b. where the time goes: the direct chain with Accord's completion tail (us p50; %zu samples)\n",
              iterations);
  std::printf("  %-50s %10s %10s %10s %10s\n", "how", "1 p50", "1 p99", "10 p50", "10 p99");
  struct Samples {
    std::vector<double> at[2];  // 1 kernel, 10 kernels
  };
  std::vector<std::string> labels = {"direct: graph, cuStreamSynchronize",
                                     "direct: graph + flag node, cuStreamSynchronize",
                                     "direct: graph + flag node, spin on the flag",
                                     "direct: graph + flag node + event node, spin on flag",
                                     "accord: flag tail (successors wait on the flag)",
                                     "accord: flag + event tail (cuda.completion=flag_event)",
                                     "direct: graph, cuEventRecord, spin on cuEventQuery",
                                     "accord: events (cuda.completion=event)"};
  std::vector<Samples> results(labels.size());
  int column = 0;
  for (std::size_t kernels : {1, 10}) {
    std::vector<std::unique_ptr<DirectChain>> direct;
    direct.push_back(std::make_unique<DirectChain>(cuda, kernels, 0, std::array<unsigned, 3>{1, 1, 1},
                                                   std::array<unsigned, 3>{32, 1, 1}, 0));
    direct.push_back(std::make_unique<DirectChain>(cuda, kernels, 0, std::array<unsigned, 3>{1, 1, 1},
                                                   std::array<unsigned, 3>{32, 1, 1}, 0, DirectTail::Flag));
    direct.push_back(std::make_unique<DirectChain>(cuda, kernels, 0, std::array<unsigned, 3>{1, 1, 1},
                                                   std::array<unsigned, 3>{32, 1, 1}, 0, DirectTail::Flag,
                                                   DirectWait::SpinOnFlag));
    direct.push_back(std::make_unique<DirectChain>(cuda, kernels, 0, std::array<unsigned, 3>{1, 1, 1},
                                                   std::array<unsigned, 3>{32, 1, 1}, 0, DirectTail::FlagEvent,
                                                   DirectWait::SpinOnFlag));
    AccordChain flag_tail(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    AccordChain event_tail(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, {{"cuda.completion", "flag_event"}});
    DirectChain direct_event(cuda, kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, DirectTail::None, DirectWait::SpinOnEvent);
    AccordChain events(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, {{"cuda.completion", "event"}});
    direct.front()->bind_thread();
    std::vector<std::function<void()>> runs;
    for (auto& d : direct) runs.push_back([&d] { d->run_once(); });
    runs.push_back([&] { flag_tail.run_once(); });
    runs.push_back([&] { event_tail.run_once(); });
    runs.push_back([&] { direct_event.run_once(); });
    runs.push_back([&] { events.run_once(); });
    for (auto& run : runs)
      for (int i = 0; i < 200; ++i) run();
    for (int round = 0; round < 8; ++round)
      for (std::size_t r = 0; r < runs.size(); ++r) {
        direct.front()->bind_thread();
        const std::vector<double> block = time_samples_us(iterations / 8, runs[r]);
        auto& into = results[r].at[column];
        into.insert(into.end(), block.begin(), block.end());
      }
    ++column;
  }
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const Summary one = summarize(results[r].at[0]);
    const Summary ten = summarize(results[r].at[1]);
    std::printf("  %-50s %10.2f %10.2f %10.2f %10.2f\n", labels[r].c_str(), one.p50, one.p99, ten.p50, ten.p99);
  }
}

// `only`: the rows to run ("direct", "flag", "event", "green", "accord", "accord-event", "accord-1stream",
// "accord-executor"), or every row
// when empty. gpu_tenants.sh runs each row in a process of its own, so that a row's
// contexts and threads cannot touch the next one's.
void tenants(const cu::CudaSymbols& cuda, const std::string& only) {
  const auto wanted = [&](const char* row) { return only.empty() || only == row; };
  constexpr int kTenants = 16;
  constexpr auto kDuration = std::chrono::seconds(3);
  std::printf("\n2. %d tenants looping a 10-kernel graph of 2 us kernels for %lld s\n", kTenants,
              static_cast<long long>(kDuration.count()));
  std::printf("  %-50s %10s %8s %8s %9s %8s %8s\n", "how", "graphs/s", "p50 us", "p99 us", "cpu us/g", "vcsw/g",
              "ivcsw/g");
  auto run = [&](const char* label, auto make, auto loop_once) {
    std::vector<std::thread> threads;
    std::atomic<bool> go{false}, stop{false};
    std::vector<std::vector<double>> samples(kTenants);
    std::atomic<int> ready{0};
    for (int t = 0; t < kTenants; ++t) {
      threads.emplace_back([&, t] {
        auto tenant = make();
        ready++;
        while (!go.load()) std::this_thread::yield();
        auto& mine = samples[static_cast<std::size_t>(t)];
        mine.reserve(1 << 20);
        while (!stop.load(std::memory_order_relaxed)) {
          const auto begin = Clock::now();
          loop_once(*tenant);
          mine.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
        }
      });
    }
    while (ready.load() < kTenants) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const auto begin = Clock::now();
    go = true;
    std::this_thread::sleep_for(kDuration);
    stop = true;
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    for (auto& t : threads) t.join();
    const double seconds = elapsed_ns(begin, Clock::now()) / 1e9;
    const auto cpu_us = [](const rusage& r) {
      return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
    };
    std::vector<double> all;
    for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
    const double graphs = static_cast<double>(all.size());
    const Summary s = summarize(all);
    std::printf("  %-50s %10.0f %8.1f %8.1f %9.1f %8.2f %8.2f\n", label, graphs / seconds, s.p50, s.p99,
                (cpu_us(after) - cpu_us(before)) / graphs,
                static_cast<double>(after.ru_nvcsw - before.ru_nvcsw) / graphs,
                static_cast<double>(after.ru_nivcsw - before.ru_nivcsw) / graphs);
  };
  const auto chain = [&](DirectTail tail, DirectWait wait, CUgreenCtx green) {
    auto d = std::make_unique<DirectChain>(cuda, 10, kTwoMicroseconds, std::array<unsigned, 3>{1, 1, 1},
                                           std::array<unsigned, 3>{32, 1, 1}, 0, tail, wait, green);
    d->bind_thread();
    return d;
  };
  if (wanted("direct"))
    run("direct: one context, a stream per thread", [&] { return chain(DirectTail::None, DirectWait::Sync, nullptr); },
        [](DirectChain& d) { d.run_once(); });
  if (wanted("flag"))
    run("direct: one context, spin on a flag node",
        [&] { return chain(DirectTail::Flag, DirectWait::SpinOnFlag, nullptr); }, [](DirectChain& d) { d.run_once(); });
  if (wanted("event"))
    run("direct: one context, spin on cuEventQuery",
        [&] { return chain(DirectTail::None, DirectWait::SpinOnEvent, nullptr); }, [](DirectChain& d) { d.run_once(); });
  // A green context per thread, each given every SM: does a context of its own (its own
  // lock and queues in the driver) lift the one-context ceiling, as MPS clients have?
  if (wanted("green") && (cuda.cuGreenCtxCreate == nullptr || cuda.cuDeviceGetDevResource == nullptr))
    std::printf("  (no green contexts in this driver)\n");
  if (wanted("green") && cuda.cuGreenCtxCreate != nullptr && cuda.cuDeviceGetDevResource != nullptr) {
    CUdevice device = 0;
    CUdevResource all{};
    CUdevResourceDesc desc = nullptr;
    const bool have = cuda.cuDeviceGet(&device, 0) == CUDA_SUCCESS &&
                      cuda.cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS &&
                      cuda.cuDevResourceGenerateDesc(&desc, &all, 1) == CUDA_SUCCESS;
    const auto green_chain = [&](DirectTail tail, DirectWait wait) {
      CUgreenCtx green = nullptr;
      if (const CUresult r = cuda.cuGreenCtxCreate(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM);
          r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuGreenCtxCreate failed: %d\n", static_cast<int>(r));
        std::exit(1);
      }
      return chain(tail, wait, green);
    };
    if (have) {
      run("direct: a green context per thread, synchronize",
          [&] { return green_chain(DirectTail::None, DirectWait::Sync); }, [](DirectChain& d) { d.run_once(); });
      run("direct: a green context per thread, spin on flag",
          [&] { return green_chain(DirectTail::Flag, DirectWait::SpinOnFlag); }, [](DirectChain& d) { d.run_once(); });
      run("direct: a green context per thread, spin on event",
          [&] { return green_chain(DirectTail::None, DirectWait::SpinOnEvent); },
          [](DirectChain& d) { d.run_once(); });
    } else {
      std::printf("  (no green contexts: the device resource could not be described)\n");
    }
  }
  // Accord rows: the same chain through an embedded runtime per thread, with `options`.
  const auto accord_row = [&](const char* row, const char* label, const DeviceOptions& options,
                              const std::string& executor = {}) {
    // The executor row only when named: time-sliced, sixteen contexts would crawl.
    if (executor.empty() ? !wanted(row) : only != row) return;
    run(label,
        [&] {
          return std::make_unique<AccordChain>(10, kTwoMicroseconds, std::array<std::uint32_t, 3>{1, 1, 1},
                                               std::array<std::uint32_t, 3>{32, 1, 1}, 0, options, executor);
        },
        [](AccordChain& a) { a.run_once(); });
  };
  accord_row("accord", "accord embedded: a runtime per thread", {});
  accord_row("accord-event", "accord embedded: a runtime per thread, events", {{"cuda.completion", "event"}});
  accord_row("accord-1stream", "accord embedded: a runtime per thread, 1 stream/lane",
             {{"cuda.streams_per_lane", "1"}});
  // Each runtime's GPU in an executor process of its own: sixteen processes launching,
  // as sixteen MPS clients when an MPS server runs (gpu_tenants.sh runs this row there).
  accord_row("accord-executor", "accord embedded: a runtime per thread, GPU executors", {}, ACCORD_BENCH_ACCORDD);
  std::printf("  (16 processes time-sliced and under MPS: the processes:LABEL rows, tests/bench/gpu_tenants.sh)\n");
}

// `socket`: empty for embedded runtimes; else every tenant is a session of that accordd
// (issue 9's noisy-neighbour row through the daemon), its priority asked for at connect.
void neighbour(std::size_t iterations, const std::string& socket = {}) {
  const auto chain = [&](std::size_t kernels, std::uint64_t spin_ns, std::array<std::uint32_t, 3> grid,
                         std::array<std::uint32_t, 3> block, int priority) {
    if (socket.empty()) return AccordChain(kernels, spin_ns, grid, block, priority);
    RuntimeOptions options;
    options.priority = priority;
    return AccordChain(unwrap(Runtime::connect(socket, options), "Runtime::connect"), kernels, spin_ns, grid, block);
  };
  std::printf("\n3%s. noisy neighbour%s: one tenant saturating every SM with 50 us blocks, three timing a 1-kernel graph\n",
              socket.empty() ? "" : "d", socket.empty() ? "" : " through accordd");
  std::printf("  %-34s %10s %10s %10s\n", "priorities", "p50 us", "p99 us", "samples");
  for (bool priorities : {false, true}) {
    std::atomic<bool> stop{false};
    std::thread heavy([&] {
      // 132 SMs on an H200; 8 blocks of 1024 threads per SM keeps every SM full.
      AccordChain noisy = chain(4, kNeighbourSpin, {132 * 8, 1, 1}, {1024, 1, 1}, priorities ? -1 : 0);
      while (!stop.load()) noisy.run_once();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<std::thread> light;
    std::vector<std::vector<double>> samples(3);
    for (int t = 0; t < 3; ++t) {
      light.emplace_back([&, t] {
        AccordChain timed = chain(1, 0, {1, 1, 1}, {32, 1, 1}, priorities ? 1 : 0);
        auto& mine = samples[static_cast<std::size_t>(t)];
        for (std::size_t i = 0; i < 50; ++i) timed.run_once();
        for (std::size_t i = 0; i < iterations; ++i) {
          const auto begin = Clock::now();
          timed.run_once();
          mine.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
        }
      });
    }
    for (auto& t : light) t.join();
    stop = true;
    heavy.join();
    std::vector<double> all;
    for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
    const Summary s = summarize(all);
    std::printf("  %-34s %10.1f %10.1f %10zu\n", priorities ? "low -1 / high +1 (stream priorities)" : "all 0",
                s.p50, s.p99, s.count);
  }
  std::printf("  (platform-notes: MPS without priorities 1,684 us, time-sliced 2,706 us, one context with stream "
              "priorities 51 us)\n");
}

// --- 16 tenant processes (time-sliced or under MPS) ------------------------------------
constexpr int kTenantProcesses = 16;
constexpr auto kProcessDuration = std::chrono::seconds(3);

std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// One tenant process: sets up its own context and graph, waits for the common start, loops
// until the common end, and writes its samples (us, binary doubles) to `out`.
// A tenant process's loop: warm up, wait for the common start, time `chain` until the
// end, and write the samples (us, doubles) to `out` for the parent. 0 when written.
template <class Chain>
int sample_until(const Chain& chain, std::int64_t start_ns, std::int64_t end_ns, const std::string& out) {
  for (int i = 0; i < 20; ++i) chain.run_once();
  std::vector<double> samples;
  samples.reserve(1 << 20);
  while (monotonic_ns() < start_ns) std::this_thread::sleep_for(std::chrono::microseconds(100));
  while (monotonic_ns() < end_ns) {
    const auto begin = Clock::now();
    chain.run_once();
    samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  std::ofstream file(out, std::ios::binary);
  file.write(reinterpret_cast<const char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
  return file ? 0 : 1;
}

// One tenant process through accordd (processes:accordd): the same chain, submitted over
// the submission ring of its own session.
int accordd_tenant_child(std::int64_t start_ns, std::int64_t end_ns, const std::string& out, const std::string& socket) {
  auto runtime = Runtime::connect(socket);
  if (!runtime.ok()) {
    std::fprintf(stderr, "tenant: %s\n", runtime.status().to_string().c_str());
    return 1;
  }
  AccordChain chain(std::move(runtime).value(), 10, kTwoMicroseconds, {1, 1, 1}, {32, 1, 1});
  return sample_until(chain, start_ns, end_ns, out);
}

int tenant_child(std::int64_t start_ns, std::int64_t end_ns, const std::string& out) {
  // The driver's own number of work queues, as a process of its own would have (the
  // MPS row is MPS as users run it).
  cu::CudaLoaderOptions loader;
  loader.max_connections = 0;
  auto cuda = cu::CudaSymbols::load(loader);
  if (!cuda.ok()) {
    std::fprintf(stderr, "tenant: %s\n", cuda.status().to_string().c_str());
    return 1;
  }
  DirectChain chain(*cuda.value(), 10, kTwoMicroseconds, {1, 1, 1}, {32, 1, 1}, 0);
  chain.bind_thread();
  return sample_until(chain, start_ns, end_ns, out);
}

void tenant_processes(const std::string& label) {
  char dir_template[] = "/tmp/accord-gpu-tenants-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  // Setting up a context takes a few hundred ms per process (more under MPS): start
  // together, well after every child could be ready.
  const std::int64_t start_ns = monotonic_ns() + 3'000'000'000;
  const std::int64_t end_ns = start_ns + std::chrono::nanoseconds(kProcessDuration).count();
  // processes:accordd: the children are Accord clients of one accordd (its GPU in an
  // executor process, the default), each a session of its own.
  std::optional<bench::DaemonProcess> accordd;
  std::string socket;
  if (label == "accordd") {
    unsetenv("ACCORD_SESSION_SOCKET");
    accordd.emplace(ACCORD_BENCH_ACCORDD, std::vector<std::string>{});
    socket = accordd->grpc_socket();
  }
  std::printf("\n4. 16 tenant processes looping a 10-kernel graph of 2 us kernels (%s) for %lld s\n",
              socket.empty() ? "direct launches" : "through accordd", static_cast<long long>(kProcessDuration.count()));
  std::printf("  %-42s %14s %10s %10s\n", "how", "graphs/s", "p50 us", "p99 us");
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int t = 0; t < kTenantProcesses; ++t) {
    std::string config = "child:" + std::to_string(start_ns) + ":" + std::to_string(end_ns) + ":" + dir +
                         "/tenant-" + std::to_string(t) + ".bin";
    if (!socket.empty()) config += ":" + socket;
    char self[] = "/proc/self/exe";
    char flag[] = "--config";
    std::vector<char> value(config.begin(), config.end());
    value.push_back('\0');
    char* child_argv[] = {self, flag, value.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, child_argv, environ) != 0) {
      std::perror("posix_spawn");
      std::exit(1);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::vector<double> all;
  for (int t = 0; t < kTenantProcesses; ++t) {
    const std::string path = std::string(dir) + "/tenant-" + std::to_string(t) + ".bin";
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    const auto bytes = static_cast<std::size_t>(file ? static_cast<std::streamoff>(file.tellg()) : 0);
    std::vector<double> samples(bytes / sizeof(double));
    file.seekg(0);
    file.read(reinterpret_cast<char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
    all.insert(all.end(), samples.begin(), samples.end());
    std::remove(path.c_str());
  }
  rmdir(dir);
  const double seconds = std::chrono::duration<double>(kProcessDuration).count();
  const Summary s = summarize(all);
  std::printf("  %-42s %14.0f %10.1f %10.1f%s\n", ("16 processes, " + label).c_str(),
              static_cast<double>(all.size()) / seconds, s.p50, s.p99,
              failed ? (" (" + std::to_string(failed) + " processes failed)").c_str() : "");
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they finish, even through a pipe
  const Flags flags =
      parse_flags(argc, argv,
                  "  --config latency|parts|executor|daemon|daemon-in-process|tenants[:ROW]|neighbour|neighbour-daemon|\n"
                  "           processes:LABEL\n");
  if (flags.config.rfind("child:", 0) == 0) {  // child:START_NS:END_NS:OUT[:ACCORDD_SOCKET]
    const std::string rest = flags.config.substr(6);
    const std::size_t a = rest.find(':');
    const std::size_t b = rest.find(':', a + 1);
    const std::size_t c = rest.find(':', b + 1);
    const std::int64_t start = std::stoll(rest.substr(0, a)), end = std::stoll(rest.substr(a + 1, b - a - 1));
    if (c != std::string::npos)
      return accordd_tenant_child(start, end, rest.substr(b + 1, c - b - 1), rest.substr(c + 1));
    return tenant_child(start, end, rest.substr(b + 1));
  }
  if (flags.config.rfind("processes:", 0) == 0) {
    tenant_processes(flags.config.substr(10));
    return 0;
  }
  if (accord_gpu_bench_ptx_size == 0) {
    std::printf("gpu_graph_bench: no GPU kernels: nvcc was not found when this was built\n");
    return 0;
  }
  auto cuda = cu::CudaSymbols::load();
  Runtime probe = unwrap(Runtime::embedded(), "Runtime::embedded");
  auto gpu = probe.gpu(0);
  if (!cuda.ok() || !gpu.ok()) {
    std::printf("gpu_graph_bench: no GPU here: %s\n",
                (!cuda.ok() ? cuda.status() : gpu.status()).to_string().c_str());
    return 0;
  }
  const char* queues = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf("gpu_graph_bench on %s (%s), driver %d, CUDA_DEVICE_MAX_CONNECTIONS=%s\n", gpu->name.c_str(),
              gpu->target.c_str(), cuda.value()->driver_version(), queues != nullptr ? queues : "(driver default)");
  const std::size_t iterations = flags.iterations ? flags.iterations : 10'000;
  if (flags.config.empty() || flags.config == "latency") latency(*cuda.value(), iterations);
  if (flags.config.empty() || flags.config == "latency" || flags.config == "executor") executor_latency(iterations);
  if (flags.config == "daemon") daemon_latency(*cuda.value(), iterations, true);
  if (flags.config == "daemon-in-process") daemon_latency(*cuda.value(), iterations, false);
  if (flags.config.empty() || flags.config == "latency" || flags.config == "parts")
    latency_parts(*cuda.value(), iterations);
  if (flags.config.empty() || flags.config == "tenants") tenants(*cuda.value(), "");
  if (flags.config.rfind("tenants:", 0) == 0) tenants(*cuda.value(), flags.config.substr(8));
  if (flags.config.empty() || flags.config == "neighbour") neighbour(iterations / 4);
  if (flags.config == "neighbour-daemon" && !std::string(ACCORD_BENCH_ACCORDD).empty()) {
    unsetenv("ACCORD_SESSION_SOCKET");
    bench::DaemonProcess accordd(ACCORD_BENCH_ACCORDD, {"--priority-limit", "max_priority=1"});
    neighbour(iterations / 4, accordd.grpc_socket());
  }
  print_machine_line();
  return 0;
}
