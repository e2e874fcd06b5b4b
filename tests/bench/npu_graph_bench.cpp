// npu_graph_bench (issue 8): submit -> complete of a prepared one-program NPU graph, side by
// side in one run, on the NPU emulator through the real Level Zero loader:
//   direct    the same program as a closed command list executed directly through Level Zero
//             (zeCommandQueueExecuteCommandLists with a fence, zeFenceHostSynchronize on the
//             calling thread, zeFenceReset), in this process (direct_npu_program.h);
//   embedded  Accord in this process (RuntimeOptions::npu_emulator): ExecutableGraph::submit,
//             Completion::wait, the Completion dropped, on Shared(0) buffers;
//   accordd   the same through accordd, spawned here with --npu-emulator (daemon_process.h).
// Programs: add16x16 (launch and completion overhead dominate) and matmul64 (the NPU works
// for a while). Blocks of the three alternate, so drift on the machine touches them alike.
// Prints a table and the ratio of each Accord p50 to the direct p50; asserts nothing.
//   npu_graph_bench [--iterations N] [--config add16x16|matmul64] [--accordd PATH]
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/accord.h"
#include "daemon/devices/npu_emulator/npu_program.h"
#include "daemon/emulation/npu_emulator_env.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/direct_npu_program.h"
#include "tests/bench/npu_bench_programs.h"
#include "tests/bench/thread_times.h"
#ifdef ACCORD_ACCORDD_PATH
#include "tests/bench/daemon_process.h"
#endif

using namespace accord;
using namespace accord::bench;
namespace l0 = accord::devices::level_zero;

namespace {

constexpr int kRounds = 5;  // blocks per side, alternating

struct NpuFlags {
  std::size_t iterations = 10'000;  // measured samples per side and program
  std::string config;
  std::string accordd;
  std::map<std::string, std::string> device_options;  // for the embedded runtime
};

constexpr const char* kUsage =
    "  --iterations N  measured samples per row (default 10000)\n"
    "  --config NAME   one program: add16x16 or matmul64 (default: both)\n"
    "  --accordd PATH  the accordd binary to spawn (default: the one built with this benchmark)\n"
    "  --device-option KEY=VALUE  a backend option of the embedded runtime (repeatable), e.g.\n"
    "                  level_zero.waiter_blocks=0 to compare with the completion thread's hand-off\n";

NpuFlags parse_npu_flags(int argc, char** argv) {
  NpuFlags flags;
#ifdef ACCORD_ACCORDD_PATH
  flags.accordd = ACCORD_ACCORDD_PATH;
#endif
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      flags.iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--config") == 0 && has_value) {
      flags.config = argv[++i];
    } else if (std::strcmp(argv[i], "--accordd") == 0 && has_value) {
      flags.accordd = argv[++i];
    } else if (std::strcmp(argv[i], "--device-option") == 0 && has_value &&
               std::strchr(argv[i + 1], '=') != nullptr) {
      const std::string option = argv[++i];
      flags.device_options[option.substr(0, option.find('='))] = option.substr(option.find('=') + 1);
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--config NAME] [--accordd PATH] [--device-option K=V]\n%s",
                   argv[0], kUsage);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
  }
  if (flags.iterations < static_cast<std::size_t>(kRounds)) flags.iterations = kRounds;
  return flags;
}

// --- Accord: the program as a one-node graph ---------------------------------------------

struct AccordNpuProgram {
  NpuBenchProgram program;
  Buffer a, b, c;
  ExecutableGraph exe;

  AccordNpuProgram(const Runtime& runtime, const NpuBenchProgram& p) : program(p) {
    a = unwrap(runtime.allocate(p.bytes(), MemoryPlacement::shared(0)), "allocate a");
    b = unwrap(runtime.allocate(p.bytes(), MemoryPlacement::shared(0)), "allocate b");
    c = unwrap(runtime.allocate(p.bytes(), MemoryPlacement::shared(0)), "allocate c");
    for (auto [buffer, value] : {std::pair{a, p.a_value}, std::pair{b, p.b_value}}) {
      WriteGuard guard = unwrap(buffer.map_write(), "map_write");
      for (float& x : guard.as<float>()) x = value;
    }
    const Kernel kernel = unwrap(runtime.load_npu_program(0, p.blob(), p.label, p.contract()), "load_npu_program");
    Graph graph = runtime.graph();
    unwrap(graph.npu(kernel, {a.view(), b.view(), c.view()}), "Graph::npu");
    exe = unwrap(std::move(graph).prepare(), "prepare");
  }
  void run_once() const {
    Completion completion = unwrap(exe.submit(), "submit");
    check(completion.wait(), "wait");
  }  // dropped here: through accordd that is a ReleaseCompletion call, so it is timed too
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

Runtime open_embedded(const std::map<std::string, std::string>& device_options) {
  RuntimeOptions options;
  options.npu_emulator = true;
  options.device_options = device_options;
  options.devices = {"level_zero"};  // and the host: no GPU backend thread competes here
  return unwrap(Runtime::embedded(options), "Runtime::embedded with the NPU emulator");
}

// --- measuring ---------------------------------------------------------------------------

// One column of a row: what one sample does, and its totals over the measured samples.
struct Side {
  Side(const char* side_name, std::function<void()> run_once, std::optional<clockid_t> other = std::nullopt)
      : name(side_name), run(std::move(run_once)), other_process(other) {}

  const char* name;
  std::function<void()> run;
  std::optional<clockid_t> other_process;  // accordd's CPU clock, for the daemon side
  std::vector<double> samples_us;
  double cpu_ns = 0, other_cpu_ns = 0, switches = 0;
  ThreadAccount threads;  // this process's threads, over the measured blocks
};

ThreadCensus g_census;  // labels this process's threads by the setup step that made them

double context_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw);
}

void measure_block(Side& side, std::size_t warmup, std::size_t samples) {
  for (std::size_t i = 0; i < warmup; ++i) side.run();
  const double cpu0 = process_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  const double other0 = side.other_process ? process_cpu_ns(*side.other_process) : 0;
  const double switches0 = context_switches();
  side.threads.begin();
  for (std::size_t i = 0; i < samples; ++i) {
    const Clock::time_point begin = Clock::now();
    side.run();
    side.samples_us.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  side.threads.end();
  side.cpu_ns += process_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  if (side.other_process) side.other_cpu_ns += process_cpu_ns(*side.other_process) - other0;
  side.switches += context_switches() - switches0;
}

// The program's work alone: the emulator's interpreter on this thread, no queue, no fence.
Summary time_interpreter(const NpuBenchProgram& p, std::size_t iterations) {
  std::string error;
  const auto bytes = std::as_bytes(std::span<const char>(p.text.data(), p.text.size()));
  const std::optional<npu_emulator::Program> program = npu_emulator::parse_program(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), error);
  if (!program) fail("the emulator refused " + p.label + ": " + error);
  std::vector<float> a(p.elements, p.a_value), b(p.elements, p.b_value), c(p.elements, 0.0f);
  void* arguments[] = {a.data(), b.data(), c.data()};
  const std::function<bool()> no_stall = [] { return false; };
  std::vector<double> samples;
  for (std::size_t i = 0; i < iterations + 100; ++i) {
    const Clock::time_point begin = Clock::now();
    npu_emulator::run_program(*program, arguments, no_stall);
    if (i >= 100) samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  if (c[0] != p.expected) fail("the interpreter computed " + std::to_string(c[0]) + " for " + p.label);
  return summarize(samples);
}

// Accord's own view of the embedded submissions: accepted -> terminal and accepted ->
// region start (CompletionProfile), over separate iterations, so no timed sample pays it.
struct EngineView {
  Summary elapsed_us, queue_us;
};
EngineView engine_view(const AccordNpuProgram& accord, std::size_t iterations) {
  std::vector<double> elapsed, queue;
  for (std::size_t i = 0; i < iterations; ++i) {
    Completion completion = unwrap(accord.exe.submit(), "submit");
    check(completion.wait(), "wait");
    const std::optional<CompletionProfile> profile = completion.profile();
    if (!profile) continue;
    elapsed.push_back(profile->elapsed_us);
    if (profile->queue_us) queue.push_back(*profile->queue_us);
  }
  return {summarize(elapsed), summarize(queue)};
}

// --- one program -------------------------------------------------------------------------

void print_side(const char* program, const Side& side, const Summary& s, double direct_p50, std::size_t samples) {
  const double n = static_cast<double>(samples);
  char daemon_cpu[32] = "-";
  if (side.other_process) std::snprintf(daemon_cpu, sizeof daemon_cpu, "%.2f", side.other_cpu_ns / n / 1000.0);
  std::printf("%-10s | %-8s | %8.2f | %8.2f | %8.2f | %8.2f | %7.3fx | %8.2f | %8s | %6.2f\n", program, side.name,
              s.p50, s.p90, s.p99, s.mean, s.p50 / direct_p50, side.cpu_ns / n / 1000.0, daemon_cpu,
              side.switches / n);
}

// Where one side's CPU went: every thread of this process that ran >= 0.5 us or was
// scheduled in >= 0.05 times per sample, as "label cpu-us/sched-ins".
void print_threads(const Side& side, std::size_t samples) {
  const double n = static_cast<double>(samples);
  std::string text;
  for (const auto& [tid, t] : side.threads.totals()) {
    if (t.run_ns / n < 500 && t.slices / n < 0.05) continue;
    char part[96];
    std::snprintf(part, sizeof part, "%s%s %.1f/%.2f", text.empty() ? "" : ", ", g_census.label_of(tid).c_str(),
                  t.run_ns / n / 1000.0, t.slices / n);
    text += part;
  }
  std::printf("%-10s   %-8s threads (cpu us / times scheduled in, per sample): %s\n", "", side.name, text.c_str());
}

bool run_program_rows(const NpuBenchProgram& p, std::size_t iterations, const Runtime& embedded,
                      std::shared_ptr<const l0::LevelZeroRuntime> level_zero, const Runtime* daemon,
                      std::optional<clockid_t> daemon_clock) {
  std::unique_ptr<DirectNpuProgram> direct = unwrap(DirectNpuProgram::create(level_zero, p), "direct Level Zero");
  g_census.label_new("direct-queue(" + p.label + ")");  // the emulator's thread for this queue
  AccordNpuProgram local(embedded, p);
  g_census.label_new("embedded(" + p.label + ")");
  std::optional<AccordNpuProgram> remote;
  if (daemon) remote.emplace(*daemon, p);
  g_census.label_new("client(" + p.label + ")");

  std::vector<Side> sides;
  sides.emplace_back("direct", [&] {
    if (const ze_result_t r = direct->run_once(); r != ZE_RESULT_SUCCESS) fail("direct run: " + l0::result_name(r));
  });
  sides.emplace_back("embedded", [&] { local.run_once(); });
  if (remote) sides.emplace_back("accordd", [&] { remote->run_once(); }, daemon_clock);
  for (Side& side : sides) side.samples_us.reserve(iterations);

  const std::size_t block = iterations / kRounds;
  for (int round = 0; round < kRounds; ++round) {
    const std::size_t samples = round + 1 == kRounds ? iterations - block * (kRounds - 1) : block;
    for (Side& side : sides) measure_block(side, round == 0 ? 200 : 20, samples);
  }

  // The outputs were cleared before one last run each: a side that computed nothing fails.
  direct->clear_output();
  local.clear_output();
  if (remote) remote->clear_output();
  for (Side& side : sides) side.run();
  const bool verified = direct->verify() && local.verify() && (!remote || remote->verify());

  const Summary direct_summary = summarize(sides[0].samples_us);
  for (Side& side : sides) print_side(p.label.c_str(), side, summarize(side.samples_us), direct_summary.p50, iterations);
  for (const Side& side : sides) print_threads(side, iterations);

  const Summary work = time_interpreter(p, std::min<std::size_t>(iterations, 2000));
  const EngineView view = engine_view(local, std::min<std::size_t>(iterations, 2000));
  std::printf("%-10s   work alone (the emulator's interpreter on this thread, no queue): p50 %.2f us\n", "",
              work.p50);
  std::printf("%-10s   embedded CompletionProfile, separate run: accepted -> terminal p50 %.2f us, accepted ->\n"
              "%-10s   region start p50 %.2f us\n",
              "", view.elapsed_us.p50, "", view.queue_us.p50);
  return verified;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row is out as soon as it is measured
  const NpuFlags flags = parse_npu_flags(argc, argv);
  std::vector<NpuBenchProgram> programs;
  for (NpuBenchProgram p : {npu_add_program(16), npu_matmul_program(64)})
    if (flags.config.empty() || flags.config == p.label) programs.push_back(std::move(p));
  if (programs.empty()) {
    std::fprintf(stderr, "no program named '%s'\n%s", flags.config.c_str(), kUsage);
    return 2;
  }

  // Before the first zeInit of this process, which the direct row and the embedded runtime
  // share (the loader reads ZE_ENABLE_ALT_DRIVERS only then).
  g_census.label_new("main");
  check(emulation::enable_npu_emulator(), "pointing the Level Zero loader at the NPU emulator");
  const std::string emulator = unwrap(emulation::npu_emulator_path(), "the NPU emulator's path");
  Runtime embedded = open_embedded(flags.device_options);
  for (const auto& [key, value] : flags.device_options) std::printf("  embedded runtime: %s = %s\n", key.c_str(), value.c_str());
  g_census.label_new("embedded");  // engine workers and watchdog, device threads, the emulator's queue
  const DeviceInfo npu = unwrap(embedded.npu(0), "npu:0 of the embedded runtime");
  std::shared_ptr<const l0::LevelZeroRuntime> level_zero =
      unwrap(l0::LevelZeroRuntime::open(l0::LevelZeroOptions{}), "opening Level Zero for the direct row");
  g_census.label_new("direct");

#ifdef ACCORD_ACCORDD_PATH
  unsetenv("ACCORD_SESSION_SOCKET");  // Runtime::connect must find the spawned daemon's channel
  DaemonProcess accordd(flags.accordd, {"--npu-emulator", "--devices", "host"});
  std::optional<Runtime> daemon = unwrap(Runtime::connect(accordd.grpc_socket()), "Runtime::connect");
  unwrap(daemon->npu(0), "npu:0 through accordd");
  const std::optional<clockid_t> daemon_clock = cpu_clock_of(accordd.pid());
  g_census.label_new("client");  // the daemon transport's gRPC threads
#else
  std::optional<Runtime> daemon;
  const std::optional<clockid_t> daemon_clock;
#endif

  std::printf("npu_graph_bench: submit -> complete of a prepared one-program NPU graph on %s\n", npu.name.c_str());
  std::printf("  (%s; emulator %s, through the Level Zero loader libze_loader.so.1)\n", npu.target.c_str(),
              emulator.c_str());
  std::printf("  %zu samples per row in %d alternating blocks; times in us, wall clock per sample\n",
              flags.iterations, kRounds);
  std::printf("  direct: zeCommandQueueExecuteCommandLists + zeFenceHostSynchronize + zeFenceReset\n");
  std::printf("  embedded / accordd: ExecutableGraph::submit + Completion::wait + drop, Shared(0) buffers\n");
  if (!daemon) std::printf("  accordd: not built in this configuration; its rows are left out\n");
  std::printf("\n%-10s | %-8s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %6s\n", "program", "via", "p50", "p90",
              "p99", "mean", "/direct", "cpu/it", "dmn cpu", "csw/it");
  std::printf("-----------+----------+----------+----------+----------+----------+----------+----------+----------"
              "+-------\n");
  bool verified = true;
  for (const NpuBenchProgram& p : programs)
    verified = run_program_rows(p, flags.iterations, embedded, level_zero, daemon ? &*daemon : nullptr,
                                daemon_clock) && verified;
  std::printf("\n/direct: the row's p50 over the direct p50. cpu/it: CPU of this process (all threads) per\n");
  std::printf("sample; dmn cpu: accordd's; csw/it: context switches of this process per sample.\n");
  print_machine_line();
#ifdef ACCORD_ACCORDD_PATH
  daemon.reset();  // the session closes before accordd is stopped
  const int status = accordd.stop();
  std::printf("  accordd: %s, exit status %d after SIGTERM\n", flags.accordd.c_str(), status);
#endif
  if (!verified) {
    std::fprintf(stderr, "a row's output was not the program's result\n");
    return 1;
  }
  return 0;
}
