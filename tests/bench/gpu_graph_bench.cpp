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
//   5. (--config contexts) whether memory one context of this process made can be used by
//      a kernel of another (under MPS each context is a client with its own address space).
// Prints a table; asserts nothing. Without a GPU it says why and exits 0.
//   gpu_graph_bench [--iterations N] [--config NAME]
//   NAME: latency (with parts), parts (1b only: Accord's completion tail taken apart on
//   the direct chain), tenants or tenants:ROW (one row or group: direct, flag, event,
//   ctx, green, accord, accord-event, accord-1stream), launchers:N[:flag|kernel] (table 2b:
//   the launch ceiling of N threads keeping the 16 chains in flight, by completion tail), neighbour, contexts, or processes:LABEL (the parent of 16 tenant
//   processes; it never opens CUDA itself, so MPS settings in its environment reach only
//   the children)
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accord/accord.h"
#include "client/api/wait_forecast.h"
#include "tests/bench/daemon_process.h"
#include "tests/bench/gpu_bench_chains.h"
#include "tests/bench/gpu_bench_contexts.h"
#include "tests/bench/gpu_bench_tenants.h"

extern const unsigned long accord_gpu_bench_ptx_size;

using namespace accord;
using namespace accord::bench;
using namespace accord::bench::gpu;

namespace {

// How many waits of this process so far slept through a forecast (RuntimeOptions::forecast_sleep).
void print_forecast_sleeps() {
  std::printf("  (waits that slept through a forecast in this process so far: %llu)\n",
              static_cast<unsigned long long>(forecast_sleeps()));
}

void latency(const cu::CudaSymbols& cuda, std::size_t iterations) {
  std::printf("\n1. submit -> complete of a chain of small kernels (us; %zu samples each)\n", iterations);
  std::printf("  %-8s %12s %12s %12s %12s %10s\n", "kernels", "direct p50", "direct p99", "accord p50", "accord p99",
              "ratio p50");
  for (std::size_t kernels : {1, 10, 100}) {
    DirectChain direct(cuda, kernels, 0, {1, 1, 1}, {32, 1, 1}, 0);
    AccordChain accord(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, options_from_environment());
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
  print_forecast_sleeps();
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
  print_forecast_sleeps();
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
  std::vector<std::string> args = accordd_args_from_environment();
  std::string extra;
  for (const std::string& word : args) extra += " " + word;
  if (!executors) args.push_back("--gpu-executors=false");
  bench::DaemonProcess accordd(ACCORD_BENCH_ACCORDD, args);
  std::printf("\n1d. submit -> complete through accordd (%s%s; ring, spinning waiter) against direct in process "
              "(us; %zu samples each)\n",
              executors ? "GPU in an executor process" : "GPU in accordd's process", extra.c_str(), iterations);
  std::printf("  %-8s %12s %12s %12s %12s %10s %14s\n", "kernels", "direct p50", "direct p99", "accordd p50",
              "accordd p99", "ratio p50", "inside p50");
  RuntimeOptions options;
  options.ring_spin = std::chrono::seconds(1);
  options.forecast_sleep = forecast_sleep_from_environment();
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
                                     "accord: flag kernel tail (the default)",
                                     "accord: flag + event tail (cuda.completion=flag_event)",
                                     "direct: graph, cuEventRecord, spin on cuEventQuery",
                                     "accord: events (cuda.completion=event)",
                                     "direct: graph + flag kernel, spin on the flag",
                                     "accord: flag node tail (cuda.flag_write=memory_op)"};
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
    DirectChain direct_kernel_flag(cuda, kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, DirectTail::KernelFlag,
                                   DirectWait::SpinOnFlag);
    AccordChain memop_tail(kernels, 0, {1, 1, 1}, {32, 1, 1}, 0, {{"cuda.flag_write", "memory_op"}});
    direct.front()->bind_thread();
    std::vector<std::function<void()>> runs;
    for (auto& d : direct) runs.push_back([&d] { d->run_once(); });
    runs.push_back([&] { flag_tail.run_once(); });
    runs.push_back([&] { event_tail.run_once(); });
    runs.push_back([&] { direct_event.run_once(); });
    runs.push_back([&] { events.run_once(); });
    runs.push_back([&] { direct_kernel_flag.run_once(); });
    runs.push_back([&] { memop_tail.run_once(); });
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
  // What making the context current costs a launch (every CudaDevice::launch does it):
  // cuCtxSetCurrent of the context already current, against asking which is current.
  CUcontext current = nullptr;
  if (cuda.cuCtxGetCurrent == nullptr || cuda.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current == nullptr) {
    std::printf("  (cuCtxGetCurrent: no current context to time)\n");
    return;
  }
  constexpr int kCalls = 1'000'000;
  const auto per_call_ns = [&](auto call) {
    const auto begin = Clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    return elapsed_ns(begin, Clock::now()) / kCalls;
  };
  const double set_ns = per_call_ns([&] { static_cast<void>(cuda.cuCtxSetCurrent(current)); });
  CUcontext seen = nullptr;
  const double get_ns = per_call_ns([&] { static_cast<void>(cuda.cuCtxGetCurrent(&seen)); });
  std::printf("  cuCtxSetCurrent (already current) %.1f ns a call, cuCtxGetCurrent %.1f ns (%d calls each)\n", set_ns,
              get_ns, kCalls);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they finish, even through a pipe
  const Flags flags =
      parse_flags(argc, argv,
                  "  --config latency|parts|executor|daemon|daemon-in-process|tenants[:ROW]|neighbour|neighbour-daemon|contexts|\n"
                  "           launchers:N|\n"
                  "           processes:LABEL\n");
  if (flags.config.rfind("child:", 0) == 0) return run_tenant_child(flags.config.substr(6));
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
  if (flags.config.rfind("tenants:", 0) == 0) {
    tenants(*cuda.value(), flags.config.substr(8));
    print_forecast_sleeps();
  }
  if (flags.config == "contexts") context_sharing(*cuda.value());
  if (flags.config.rfind("launchers:", 0) == 0) {
    // launchers:N[:TAIL]
    const std::string spec = flags.config.substr(10);
    const std::size_t colon = spec.find(':');
    launchers(*cuda.value(), std::atoi(spec.substr(0, colon).c_str()),
              colon == std::string::npos ? "flag" : spec.substr(colon + 1));
  }
  if (flags.config.empty() || flags.config == "neighbour") neighbour(iterations / 4);
  if (flags.config == "neighbour-daemon" && !std::string(ACCORD_BENCH_ACCORDD).empty()) {
    unsetenv("ACCORD_SESSION_SOCKET");
    std::vector<std::string> args = accordd_args_from_environment();
    args.insert(args.end(), {"--priority-limit", "max_priority=1"});
    bench::DaemonProcess accordd(ACCORD_BENCH_ACCORDD, args);
    neighbour(iterations / 4, accordd.grpc_socket());
  }
  print_machine_line();
  return 0;
}
