// The many-tenant rows of gpu_graph_bench: see gpu_bench_tenants.h.
#include "tests/bench/gpu_bench_tenants.h"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/daemon_process.h"
#include "tests/bench/thread_times.h"

extern char** environ;

namespace accord::bench::gpu {
namespace {

double cpu_us(const rusage& r) {
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// A measured window: its wall seconds, and this process's CPU time and context switches
// (voluntary, involuntary) in it.
struct Window {
  double seconds = 0;
  double cpu_us = 0;
  double voluntary_switches = 0;
  double involuntary_switches = 0;
};
// Sets `go`, lets the threads run for `duration`, sets `stop`; the threads are joined by
// the caller.
Window run_window(std::atomic<bool>& go, std::atomic<bool>& stop, std::chrono::seconds duration) {
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto begin = Clock::now();
  // On stderr, so that a profiler can start with the window (tests/bench/RESULTS.md, session 25).
  std::fprintf(stderr, "  (measuring for %lld s)\n", static_cast<long long>(duration.count()));
  go = true;
  std::this_thread::sleep_for(duration);
  stop = true;
  const double seconds = elapsed_ns(begin, Clock::now()) / 1e9;
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  return {seconds, cpu_us(after) - cpu_us(before), static_cast<double>(after.ru_nvcsw - before.ru_nvcsw),
          static_cast<double>(after.ru_nivcsw - before.ru_nivcsw)};
}

std::vector<double> merged(const std::vector<std::vector<double>>& per_thread) {
  std::vector<double> all;
  for (const auto& s : per_thread) all.insert(all.end(), s.begin(), s.end());
  return all;
}

// Each tenant's own loop p50, lowest / median / highest: tenants whose graphs queue
// behind another's on one hardware work queue loop markedly slower than the rest, which
// the merged percentiles above hide. Sorts each tenant's samples.
void print_tenant_spread(std::vector<std::vector<double>>& per_tenant) {
  std::vector<double> p50s;
  for (auto& samples : per_tenant)
    if (!samples.empty()) p50s.push_back(summarize(samples).p50);
  if (p50s.empty()) return;
  std::sort(p50s.begin(), p50s.end());
  std::printf("    each tenant's p50 us: lowest %.1f, median %.1f, highest %.1f; above 1.25x the median: %zu of %zu\n",
              p50s.front(), p50s[p50s.size() / 2], p50s.back(),
              static_cast<std::size_t>(std::count_if(p50s.begin(), p50s.end(),
                                                     [&](double v) { return v > 1.25 * p50s[p50s.size() / 2]; })),
              p50s.size());
}

}  // namespace

// `only`: the rows to run ("direct", "flag", "event", "ctx", "green", "accord", "accord-event", "accord-memop", "accord-1stream",
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
    const Window window = run_window(go, stop, kDuration);
    for (auto& t : threads) t.join();
    std::vector<double> all = merged(samples);
    const double graphs = static_cast<double>(all.size());
    const Summary s = summarize(all);
    std::printf("  %-50s %10.0f %8.1f %8.1f %9.1f %8.2f %8.2f\n", label, graphs / window.seconds, s.p50, s.p99,
                window.cpu_us / graphs, window.voluntary_switches / graphs, window.involuntary_switches / graphs);
    print_tenant_spread(samples);
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
  // A context of its own per thread (cuCtxCreate). Without MPS these are time-sliced;
  // under MPS each is a client of the server, as each of sixteen processes is: does one
  // process with sixteen MPS clients reach what sixteen processes reach?
  if (wanted("ctx"))
    run("direct: a context of its own per thread",
        [&] {
          auto d = std::make_unique<DirectChain>(cuda, 10, kTwoMicroseconds, std::array<unsigned, 3>{1, 1, 1},
                                                 std::array<unsigned, 3>{32, 1, 1}, 0, DirectTail::None,
                                                 DirectWait::Sync, nullptr, DirectContext::Own);
          d->bind_thread();
          return d;
        },
        [](DirectChain& d) { d.run_once(); });
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
  // Accord rows: the same chain through an embedded runtime per thread, with `options`,
  // and with ACCORD_BENCH_CUDA_OPTIONS (words "cuda.KEY=VALUE" split at spaces) on top, so
  // that one call can compare the backend's settings; the label then says so.
  const DeviceOptions extra = options_from_environment();
  const auto accord_row = [&](const char* row, const char* plain_label, DeviceOptions options,
                              const std::string& executor = {}) {
    // The executor row only when named: time-sliced, sixteen contexts would crawl.
    if (executor.empty() ? !wanted(row) : only != row) return;
    std::string label = plain_label;
    for (const auto& [key, value] : extra) {
      options[key] = value;
      label += " " + key + "=" + value;
    }
    run(label.c_str(),
        [&] {
          return std::make_unique<AccordChain>(10, kTwoMicroseconds, std::array<std::uint32_t, 3>{1, 1, 1},
                                               std::array<std::uint32_t, 3>{32, 1, 1}, 0, options, executor);
        },
        [](AccordChain& a) { a.run_once(); });
  };
  accord_row("accord", "accord embedded: a runtime per thread", {});
  accord_row("accord-event", "accord embedded: a runtime per thread, events", {{"cuda.completion", "event"}});
  accord_row("accord-memop", "accord embedded: a runtime per thread, flag node tails",
             {{"cuda.flag_write", "memory_op"}});
  accord_row("accord-1stream", "accord embedded: a runtime per thread, 1 stream/lane",
             {{"cuda.streams_per_lane", "1"}});
  // Each runtime's GPU in an executor process of its own: sixteen processes launching,
  // as sixteen MPS clients when an MPS server runs (gpu_tenants.sh runs this row there).
  // Two hardware work queues each: an MPS server takes a bounded number of device
  // connections from all its clients, and at Accord's default of 32 per context the
  // H200's accepted this benchmark and three executors, then refused the others
  // ("Reached maximum number of device connections"); with a standby executor per
  // runtime, 33 clients must fit.
  accord_row("accord-executor", "accord embedded: a runtime per thread, GPU executors",
             {{"cuda.max_connections", "2"}}, ACCORD_BENCH_ACCORDD);
  std::printf("  (16 processes time-sliced and under MPS: the processes:LABEL rows, tests/bench/gpu_tenants.sh)\n");
}

void launchers(const cu::CudaSymbols& cuda, int launchers, const std::string& tail_name) {
  const DirectTail tail = tail_name == "kernel" ? DirectTail::KernelFlag : DirectTail::Flag;
  constexpr int kChains = 16;
  constexpr auto kDuration = std::chrono::seconds(3);
  launchers = std::clamp(launchers, 1, kChains);
  std::printf("\n2b. %d launching threads keeping %d 10-kernel graphs of 2 us kernels in flight for %lld s\n",
              launchers, kChains, static_cast<long long>(kDuration.count()));
  std::printf("  %-50s %10s %8s %8s %9s\n", "how", "graphs/s", "p50 us", "p99 us", "cpu us/g");
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int> ready{0};
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(launchers));
  std::vector<std::thread> threads;
  for (int t = 0; t < launchers; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<DirectChain>> mine;
      for (int c = t; c < kChains; c += launchers)
        mine.push_back(std::make_unique<DirectChain>(cuda, 10, kTwoMicroseconds, std::array<unsigned, 3>{1, 1, 1},
                                                     std::array<unsigned, 3>{32, 1, 1}, 0, tail,
                                                     DirectWait::SpinOnFlag));
      mine.front()->bind_thread();
      std::vector<Clock::time_point> started(mine.size());
      auto& out = samples[static_cast<std::size_t>(t)];
      out.reserve(1 << 21);
      ready++;
      while (!go.load()) std::this_thread::yield();
      for (std::size_t i = 0; i < mine.size(); ++i) started[i] = Clock::now(), mine[i]->launch();
      while (!stop.load(std::memory_order_relaxed)) {
        for (std::size_t i = 0; i < mine.size(); ++i) {
          if (!mine[i]->done()) continue;
          const auto now = Clock::now();
          out.push_back(elapsed_ns(started[i], now) / 1000.0);
          started[i] = now;
          mine[i]->launch();
        }
      }
      for (auto& chain : mine)
        while (!chain->done()) {
        }
    });
  }
  while (ready.load() < launchers) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Window window = run_window(go, stop, kDuration);
  for (auto& t : threads) t.join();
  std::vector<double> all = merged(samples);
  const Summary s = summarize(all);
  const std::string label = "direct: " + std::to_string(launchers) + " launching thread(s), " +
                            (tail == DirectTail::KernelFlag ? "flag kernel" : "flag node");
  std::printf("  %-50s %10.0f %8.1f %8.1f %9.1f\n", label.c_str(), static_cast<double>(all.size()) / window.seconds,
              s.p50, s.p99, window.cpu_us / static_cast<double>(all.size()));
}

// `socket`: empty for embedded runtimes; else every tenant is a session of that accordd
// (issue 9's noisy-neighbour row through the daemon), its priority asked for at connect.
void neighbour(std::size_t iterations, const std::string& socket) {
  const auto chain = [&](std::size_t kernels, std::uint64_t spin_ns, std::array<std::uint32_t, 3> grid,
                         std::array<std::uint32_t, 3> block, int priority) {
    if (socket.empty()) return AccordChain(kernels, spin_ns, grid, block, priority, options_from_environment());
    RuntimeOptions options;
    options.priority = priority;
    options.forecast_sleep = forecast_sleep_from_environment();
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

namespace {

// --- 16 tenant processes (time-sliced or under MPS) ------------------------------------
constexpr int kTenantProcesses = 16;
constexpr auto kProcessDuration = std::chrono::seconds(3);

std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

bool write_samples(const std::string& path, const std::vector<double>& samples) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
  return static_cast<bool>(file);
}

std::vector<double> read_samples(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<std::size_t>(file ? static_cast<std::streamoff>(file.tellg()) : 0);
  std::vector<double> samples(bytes / sizeof(double));
  file.seekg(0);
  file.read(reinterpret_cast<char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
  std::remove(path.c_str());
  return samples;
}

// A tenant process's loop: warm up, wait for the common start, time `chain` until the
// end, and write the samples (us, doubles) to `out` for the parent. 0 when written.
// `inside`, when given, collects what the chain records per run (accordd's accepted ->
// terminal time) and is written to `out`.inside.
template <class Chain>
int sample_until(const Chain& chain, std::int64_t start_ns, std::int64_t end_ns, const std::string& out,
                 std::vector<double>* inside = nullptr) {
  for (int i = 0; i < 20; ++i) chain.run_once();
  if (inside != nullptr) inside->clear();
  std::vector<double> samples;
  samples.reserve(1 << 20);
  while (monotonic_ns() < start_ns) std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (inside != nullptr) inside->clear();
  while (monotonic_ns() < end_ns) {
    const auto begin = Clock::now();
    chain.run_once();
    samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  const bool written = write_samples(out, samples) && (inside == nullptr || write_samples(out + ".inside", *inside));
  return written ? 0 : 1;
}

// One tenant process through accordd (processes:accordd): the same chain, submitted over
// the submission ring of its own session.
int accordd_tenant_child(std::int64_t start_ns, std::int64_t end_ns, const std::string& out, const std::string& socket) {
  // ACCORD_BENCH_RING_SPIN_US: how long a waiting client spins on its ring before it
  // sleeps (RuntimeOptions::ring_spin). It applies only while the machine has a core to
  // spare; with 16 clients and accordd's threads on 16 CPUs a client spins a few
  // microseconds whatever it says.
  RuntimeOptions options;
  options.forecast_sleep = forecast_sleep_from_environment();
  if (const char* spin = std::getenv("ACCORD_BENCH_RING_SPIN_US"))
    options.ring_spin = std::chrono::microseconds(std::atoll(spin));
  auto runtime = Runtime::connect(socket, options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "tenant: %s\n", runtime.status().to_string().c_str());
    return 1;
  }
  AccordChain chain(std::move(runtime).value(), 10, kTwoMicroseconds, {1, 1, 1}, {32, 1, 1});
  std::vector<double> inside;
  inside.reserve(1 << 20);
  chain.profiles = &inside;
  return sample_until(chain, start_ns, end_ns, out, &inside);
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

}  // namespace

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
  // ACCORD_BENCH_ACCORDD_ARGS (words split at spaces) go to accordd's command line, so
  // that one call can compare its settings (--ring-pollers, --gpu-executors=false).
  // ACCORD_BENCH_ACCORDD_COUNT (1-16, default 1): that many accordds, tenant t a client of
  // accordd t % COUNT. Under an MPS server (CUDA_MPS_PIPE_DIRECTORY in the environment)
  // their executors are MPS clients: what launching from several processes gives.
  std::vector<std::unique_ptr<bench::DaemonProcess>> daemons;
  std::vector<std::string> sockets;
  std::string socket;
  std::string how = label;
  if (label == "accordd") {
    unsetenv("ACCORD_SESSION_SOCKET");
    const std::vector<std::string> args = accordd_args_from_environment();
    for (const std::string& word : args) how += " " + word;
    // ACCORD_BENCH_ACCORDD_BINARY: another accordd than the one built beside this bench,
    // so that one call can compare two builds of the daemon with the same clients.
    const char* other = std::getenv("ACCORD_BENCH_ACCORDD_BINARY");
    const std::string binary = other != nullptr && *other != '\0' ? other : ACCORD_BENCH_ACCORDD;
    if (binary != ACCORD_BENCH_ACCORDD) how += " (" + binary + ")";
    int count = 1;
    if (const char* text = std::getenv("ACCORD_BENCH_ACCORDD_COUNT")) count = std::clamp(std::atoi(text), 1, 16);
    if (count > 1) how += " x" + std::to_string(count) + " accordds";
    for (int i = 0; i < count; ++i) {
      daemons.push_back(std::make_unique<bench::DaemonProcess>(binary, args));
      sockets.push_back(daemons.back()->grpc_socket());
    }
    socket = sockets.front();
  }
  bench::DaemonProcess* accordd = daemons.empty() ? nullptr : daemons.front().get();
  std::printf("\n4. 16 tenant processes looping a 10-kernel graph of 2 us kernels (%s) for %lld s\n",
              socket.empty() ? "direct launches" : "through accordd", static_cast<long long>(kProcessDuration.count()));
  std::printf("  %-42s %14s %10s %10s\n", "how", "graphs/s", "p50 us", "p99 us");
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int t = 0; t < kTenantProcesses; ++t) {
    std::string config = "child:" + std::to_string(start_ns) + ":" + std::to_string(end_ns) + ":" + dir +
                         "/tenant-" + std::to_string(t) + ".bin";
    if (!sockets.empty()) config += ":" + sockets[static_cast<std::size_t>(t) % sockets.size()];
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
  // accordd's and its executors' threads over the measured window: which ran, which
  // waited for a CPU (the first accordd's, when there are several).
  std::optional<ProcessTreeAccount> threads;
  if (accordd) {
    threads.emplace(accordd->pid());
    while (monotonic_ns() < start_ns) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    threads->begin();
    while (monotonic_ns() < end_ns) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    threads->end();
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  std::vector<double> all, inside;
  std::vector<std::vector<double>> per_tenant;
  for (int t = 0; t < kTenantProcesses; ++t) {
    const std::string path = std::string(dir) + "/tenant-" + std::to_string(t) + ".bin";
    const std::vector<double> samples = read_samples(path);
    all.insert(all.end(), samples.begin(), samples.end());
    per_tenant.push_back(samples);
    if (accordd) {
      const std::vector<double> profiles = read_samples(path + ".inside");
      inside.insert(inside.end(), profiles.begin(), profiles.end());
    }
  }
  rmdir(dir);
  const double seconds = std::chrono::duration<double>(kProcessDuration).count();
  const Summary s = summarize(all);
  std::printf("  %-42s %14.0f %10.1f %10.1f%s\n", ("16 processes, " + how).c_str(),
              static_cast<double>(all.size()) / seconds, s.p50, s.p99,
              failed ? (" (" + std::to_string(failed) + " processes failed)").c_str() : "");
  print_tenant_spread(per_tenant);
  if (accordd && !inside.empty()) {
    const Summary in = summarize(inside);
    std::printf("    inside accordd (accepted -> terminal, from each completion's profile): p50 %.1f us, p99 %.1f us\n",
                in.p50, in.p99);
  }
  if (threads) threads->print("    ");
}


int run_tenant_child(const std::string& spec) {
  // START_NS:END_NS:OUT[:ACCORDD_SOCKET]
  const std::size_t a = spec.find(':');
  const std::size_t b = spec.find(':', a + 1);
  const std::size_t c = spec.find(':', b + 1);
  if (a == std::string::npos || b == std::string::npos) {
    std::fprintf(stderr, "tenant: bad child spec '%s'\n", spec.c_str());
    return 2;
  }
  const std::int64_t start = std::stoll(spec.substr(0, a)), end = std::stoll(spec.substr(a + 1, b - a - 1));
  if (c != std::string::npos)
    return accordd_tenant_child(start, end, spec.substr(b + 1, c - b - 1), spec.substr(c + 1));
  return tenant_child(start, end, spec.substr(b + 1));
}

}  // namespace accord::bench::gpu
