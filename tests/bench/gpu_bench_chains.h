// What the GPU benchmarks time (gpu_graph_bench): a chain of small kernels launched
// directly as a CUDA graph through the driver API, and the same chain through an Accord
// runtime (embedded, or connected to accordd); plus the timing loops they share.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "accord/accord.h"
#include "daemon/devices/cuda/cuda_symbols.h"
#include "tests/bench/bench_util.h"

namespace accord::bench::gpu {

namespace cu = accord::devices::cuda;

constexpr std::uint64_t kTwoMicroseconds = 2'000;
constexpr std::uint64_t kNeighbourSpin = 50'000;


// The PTX of gpu_bench_kernels.cu, and the contract of its one kernel, accord_bench_step
// (out f32[1], in f32[1], then the nanoseconds it spins).
std::vector<std::byte> ptx();
KernelContract step_contract(std::uint64_t spin_ns);

// What ends the direct graph (to take Accord's completion tail apart): nothing; a
// memory-operation node writing a pinned host flag (cuda.flag_write = memory_op); that
// node and an event record; a one-thread kernel writing the flag (Accord's default tail).
enum class DirectTail { None, Flag, FlagEvent, KernelFlag };
// How the direct run waits: cuStreamSynchronize, a spin on the host flag, or an event
// recorded after the launch and queried in a loop.
enum class DirectWait { Sync, SpinOnFlag, SpinOnEvent };

// Which context the direct chain lives in: the process's primary context, or one made for
// it alone (cuCtxCreate; under MPS each such context is a client of its own).
enum class DirectContext { Primary, Own };

// The chain as a CUDA graph on its own stream of the primary context (or of `green`,
// which it then owns, or of a context made for it), launched and waited for through the
// driver. One thread at a time;
// setup failures end the process with the call's name.
class DirectChain {
 public:
  DirectChain(const cu::CudaSymbols& cuda, std::size_t kernels, std::uint64_t spin_ns, std::array<unsigned, 3> grid,
              std::array<unsigned, 3> block, int priority, DirectTail tail = DirectTail::None,
              DirectWait wait = DirectWait::Sync, CUgreenCtx green = nullptr,
              DirectContext context = DirectContext::Primary);
  ~DirectChain();
  DirectChain(const DirectChain&) = delete;
  DirectChain& operator=(const DirectChain&) = delete;

  void bind_thread() const;
  void run_once() const;
  // For a thread that keeps several chains in flight (a tail with a flag only): clears the flag
  // and launches; done() says the flag was written since.
  void launch() const;
  bool done() const { return flag_->load(std::memory_order_acquire) != 0; }

 private:
  void ok(CUresult r, const char* what) const;
  struct Params {
    CUdeviceptr out, in;
    unsigned long long spin;
  };
  const cu::CudaSymbols& cuda_;
  DirectWait wait_;
  CUgreenCtx green_ = nullptr;  // owned: destroyed with the chain
  bool own_context_ = false;    // context_ made by cuCtxCreate: destroyed with the chain
  std::atomic<std::uint32_t>* flag_ = nullptr;
  CUevent event_ = nullptr;
  CUevent done_ = nullptr;  // SpinOnEvent
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUfunction flag_function_ = nullptr;
  CUdeviceptr device_flag_ = 0;
  CUdeviceptr buffers_ = 0;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  CUstream stream_ = nullptr;
  std::vector<Params> params_;
};

using DeviceOptions = std::map<std::string, std::string>;

// An embedded runtime on the GPU alone, at `priority`, its GPU in this process or in an
// executor process (`executor`: the accordd binary).
Runtime open_runtime(int priority, const DeviceOptions& device_options, const std::string& executor = {});

// The chain through an Accord runtime: a prepared graph of `kernels` launches, each
// submitted and waited for. One thread at a time.
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
              std::array<std::uint32_t, 3> block);
  void run_once() const;
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

// The embedded rows' device options from ACCORD_BENCH_CUDA_OPTIONS (words "cuda.KEY=VALUE"
// split at spaces), so that one call can compare the backend's settings.
DeviceOptions options_from_environment();
// accordd's extra command-line words from ACCORD_BENCH_ACCORDD_ARGS (split at spaces), so
// that one call can compare its settings (--ring-pollers 4, --device-option cuda.K=V).
std::vector<std::string> accordd_args_from_environment();
// RuntimeOptions::forecast_sleep for every runtime the bench opens, so that one build can
// compare them: ACCORD_BENCH_FORECAST_SLEEP=never (or 0), daemon (the default) or always
// (or 1). Exits on another value.
ForecastSleep forecast_sleep_from_environment();

}  // namespace accord::bench::gpu
