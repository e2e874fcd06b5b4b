// Many tenants through the real accordd (issue "Submission ring and many tenants"):
//   1. submissions per second of a one-region host graph (accord.add_f32 over 16 floats)
//      with 1, 2, 4, 8, 16 and 64 client processes, each its own session looping
//      submit -> wait -> drop (over the ring) for --seconds;
//   2. 256 client processes connected at once, each submitting now and then (every 50 to
//      150 ms) for --seconds: how many were refused, how many submissions failed or took
//      over a second (starved), and ListDevices from one more session meanwhile; then
//      accordd's CPU time over 10 s with all 256 connected and idle.
// Every client checks its graph's result. Prints tables; asserts nothing else.
//   daemon_scale_bench [--seconds S] [--accordd PATH] [--config throughput|sessions] [--ring-pollers N]
// Clients are this binary run again (--child ...), started together through files in a
// temporary directory: each says it is ready, the parent then writes when to start.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accord/accord.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/daemon_process.h"
#include "tests/bench/probe_graph.h"

extern char** environ;

using namespace accord;
using namespace accord::bench;

namespace {

constexpr std::chrono::milliseconds kStarved{1000};
constexpr auto kIdleWindow = std::chrono::seconds(10);

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

bool exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

void touch(const std::string& path) { std::ofstream(path) << ""; }

// --- a client process ----------------------------------------------------------------------
// Exit status: 0 served, 2 refused (no session), 3 a wrong result, 4 a failed call.
struct ChildArgs {
  std::string mode;  // "loop" or "now-and-then"
  std::string socket;
  std::string dir;
  int index = 0;
};

// Waits for the parent's go file: "START_NS END_NS IDLE_END_NS".
std::array<std::int64_t, 3> await_go(const std::string& dir) {
  const std::string go = dir + "/go";
  // 50 ms: 256 clients polling faster would take the CPU the daemon is measured on.
  while (!exists(go)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::array<std::int64_t, 3> times{};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::ifstream in(go);
    if (in >> times[0] >> times[1] >> times[2]) return times;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return times;
}

int run_child(const ChildArgs& args) {
  auto runtime = Runtime::connect(args.socket);
  const std::string me = args.dir + "/client-" + std::to_string(args.index);
  if (!runtime.ok()) {
    std::ofstream(me + ".refused") << runtime.status().to_string() << "\n";
    touch(me + ".ready");
    return 2;
  }
  ProbeGraph graph = make_probe_graph(*runtime, GraphKind::AddF32x16);
  for (int i = 0; i < 5; ++i) check(unwrap(graph.exe.submit(), "submit").wait(), "wait");
  touch(me + ".ready");
  const auto [start, end, idle_end] = await_go(args.dir);
  while (now_ns() < start)
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<std::int64_t>(start - now_ns(), 0)));
  std::vector<double> samples;
  samples.reserve(1 << 18);
  std::mt19937 random(static_cast<unsigned>(args.index) * 7919u + 17u);
  std::uniform_int_distribution<int> pause_ms(50, 150);
  int failed = 0;
  while (now_ns() < end) {
    if (args.mode == "now-and-then") {
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
      if (now_ns() >= end) break;
    }
    const auto begin = Clock::now();
    auto submitted = graph.exe.submit();
    const Status status = submitted.ok() ? submitted->wait() : submitted.status();
    if (!status.ok()) {
      ++failed;
      continue;
    }
    samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  const bool right = graph.verify();
  std::ofstream out(me + ".bin", std::ios::binary);
  out.write(reinterpret_cast<const char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
  out.close();
  if (failed > 0) std::ofstream(me + ".failed") << failed << "\n";
  // Stay connected and idle until the parent has measured accordd at rest.
  if (now_ns() < idle_end) std::this_thread::sleep_for(std::chrono::nanoseconds(idle_end - now_ns()));
  if (!right) return 3;
  return failed > 0 ? 4 : 0;
}

// --- the parent --------------------------------------------------------------------------------
struct Clients {
  std::string dir;
  std::vector<pid_t> pids;
};

Clients spawn_clients(const std::string& mode, const std::string& socket, int count) {
  Clients c;
  char dir_template[] = "/tmp/accord-scale-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) fail("mkdtemp");
  c.dir = dir_template;
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> args = {"/proc/self/exe", "--child", mode, socket, c.dir, std::to_string(i)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) fail("posix_spawn");
    c.pids.push_back(pid);
  }
  // Every client connected (or was refused) and warmed up.
  const auto deadline = Clock::now() + std::chrono::minutes(5);
  for (int i = 0; i < count; ++i)
    while (!exists(c.dir + "/client-" + std::to_string(i) + ".ready")) {
      int status = 0;
      if (waitpid(c.pids[static_cast<std::size_t>(i)], &status, WNOHANG) == c.pids[static_cast<std::size_t>(i)])
        fail("client " + std::to_string(i) + " exited before it was ready (status " + std::to_string(status) + ")");
      if (Clock::now() > deadline) fail("clients did not become ready within 5 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  return c;
}

void go(const Clients& c, std::int64_t start, std::int64_t end, std::int64_t idle_end) {
  const std::string tmp = c.dir + "/go.tmp";
  std::ofstream(tmp) << start << " " << end << " " << idle_end << "\n";
  std::rename(tmp.c_str(), (c.dir + "/go").c_str());
}

struct Outcome {
  std::vector<double> samples;
  int refused = 0, wrong = 0, with_failures = 0, failed_calls = 0, other = 0;
};

Outcome collect(const Clients& c) {
  Outcome o;
  for (std::size_t i = 0; i < c.pids.size(); ++i) {
    int status = 0;
    waitpid(c.pids[i], &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 2) ++o.refused;
    else if (code == 3) ++o.wrong;
    else if (code == 4) ++o.with_failures;
    else if (code != 0) ++o.other;
    const std::string me = c.dir + "/client-" + std::to_string(i);
    std::ifstream in(me + ".bin", std::ios::binary | std::ios::ate);
    const auto bytes = static_cast<std::size_t>(in ? static_cast<std::streamoff>(in.tellg()) : 0);
    std::vector<double> samples(bytes / sizeof(double));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(samples.data()), static_cast<std::streamsize>(samples.size() * sizeof(double)));
    o.samples.insert(o.samples.end(), samples.begin(), samples.end());
    std::ifstream failed(me + ".failed");
    int n = 0;
    if (failed >> n) o.failed_calls += n;
    for (const char* suffix : {".bin", ".failed", ".ready", ".refused"}) std::remove((me + suffix).c_str());
  }
  std::remove((c.dir + "/go").c_str());
  rmdir(c.dir.c_str());
  return o;
}

void throughput(const DaemonProcess& accordd, std::chrono::seconds duration) {
  std::printf("\n1. submissions per second of a one-region host graph (accord.add_f32 x 16), %lld s per row\n",
              static_cast<long long>(duration.count()));
  std::printf("  %9s %14s %10s %10s %14s %10s\n", "processes", "submissions/s", "p50 us", "p99 us", "accordd cpu/sub",
              "bad");
  const auto clock = cpu_clock_of(accordd.pid());
  // ACCORD_BENCH_CLIENTS ("8 16"): only these rows, e.g. to profile one of them.
  std::vector<int> counts = {1, 2, 4, 8, 16, 64};
  if (const char* only = std::getenv("ACCORD_BENCH_CLIENTS")) {
    std::istringstream words(only);
    counts.clear();
    for (int n = 0; words >> n;)
      if (n > 0 && n <= 256) counts.push_back(n);
    if (counts.empty())
      std::fprintf(stderr, "ACCORD_BENCH_CLIENTS='%s' names no client count in 1..256: no throughput rows\n", only);
  }
  for (int n : counts) {
    Clients clients = spawn_clients("loop", accordd.grpc_socket(), n);
    const std::int64_t start = now_ns() + 300'000'000;  // every client sees the go file first
    const std::int64_t end = start + std::chrono::nanoseconds(duration).count();
    go(clients, start, end, end);
    while (now_ns() < start) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // On stderr, so that a profiler can start with the window.
    std::fprintf(stderr, "  (measuring %d processes for %lld s)\n", n, static_cast<long long>(duration.count()));
    const double cpu_before = clock ? process_cpu_ns(*clock) : 0;
    while (now_ns() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double cpu_after = clock ? process_cpu_ns(*clock) : 0;
    Outcome o = collect(clients);
    const double count = static_cast<double>(o.samples.size());
    const Summary s = summarize(o.samples);
    const double seconds = std::chrono::duration<double>(duration).count();
    std::printf("  %9d %14.0f %10.1f %10.1f %12.1f us %10d\n", n, count / seconds, s.p50, s.p99,
                count > 0 ? (cpu_after - cpu_before) / 1000.0 / count : 0.0,
                o.refused + o.wrong + o.with_failures + o.other);
  }
  std::printf("  (bad: client processes refused, with a wrong result, or with a failed call)\n");
}

void sessions(const DaemonProcess& accordd, std::chrono::seconds duration, int count) {
  std::printf("\n2. %d client processes connected at once, each submitting every 50-150 ms for %lld s\n", count,
              static_cast<long long>(duration.count()));
  const auto setup_begin = Clock::now();
  Clients clients = spawn_clients("now-and-then", accordd.grpc_socket(), count);
  const double setup_s = elapsed_ns(setup_begin, Clock::now()) / 1e9;
  Runtime observer = unwrap(Runtime::connect(accordd.grpc_socket()), "Runtime::connect (observer)");
  const std::int64_t start = now_ns() + 1'000'000'000;  // every client sees the go file first
  const std::int64_t end = start + std::chrono::nanoseconds(duration).count();
  const std::int64_t idle_from = end + 2'000'000'000;  // every client has finished its last submission
  const std::int64_t idle_end = idle_from + std::chrono::nanoseconds(kIdleWindow).count() + 1'000'000'000;
  go(clients, start, end, idle_end);
  // ListDevices from one more session while they submit.
  std::vector<double> list_us;
  while (now_ns() < start) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (now_ns() < end) {
    const auto begin = Clock::now();
    unwrap(observer.devices(), "ListDevices");
    list_us.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // accordd at rest: every session connected, nothing submitted.
  while (now_ns() < idle_from) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto clock = cpu_clock_of(accordd.pid());
  const double cpu_before = clock ? process_cpu_ns(*clock) : 0;
  const auto idle_begin = Clock::now();
  std::this_thread::sleep_for(kIdleWindow);
  const double cpu_after = clock ? process_cpu_ns(*clock) : 0;
  const double idle_s = elapsed_ns(idle_begin, Clock::now()) / 1e9;
  Outcome o = collect(clients);
  const Summary sub = summarize(o.samples);
  const Summary list = summarize(list_us);
  const std::size_t starved =
      static_cast<std::size_t>(std::count_if(o.samples.begin(), o.samples.end(), [](double us) {
        return us > std::chrono::duration<double, std::micro>(kStarved).count();
      }));
  std::printf("  connected and warmed up in %.1f s; refused %d; wrong results %d; failed calls %d (in %d "
              "processes); other exits %d\n",
              setup_s, o.refused, o.wrong, o.failed_calls, o.with_failures, o.other);
  std::printf("  submissions %zu: p50 %.1f us, p99 %.1f us, max %.1f us; over %lld ms (starved): %zu\n", sub.count,
              sub.p50, sub.p99, sub.max, static_cast<long long>(kStarved.count()), starved);
  std::printf("  ListDevices from another session meanwhile: %zu calls, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              list.count, list.p50 / 1000.0, list.p99 / 1000.0, list.max / 1000.0);
  if (clock)
    std::printf("  accordd idle with %d sessions connected: %.3f s of CPU over %.1f s = %.2f%% of a core\n", count + 1,
                (cpu_after - cpu_before) / 1e9, idle_s, 100.0 * (cpu_after - cpu_before) / 1e9 / idle_s);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc == 6 && std::strcmp(argv[1], "--child") == 0)
    return run_child(ChildArgs{argv[2], argv[3], argv[4], std::atoi(argv[5])});
  std::string accordd_path;
#ifdef ACCORD_ACCORDD_PATH
  accordd_path = ACCORD_ACCORDD_PATH;
#endif
  std::string config;
  std::string ring_pollers;  // accordd's own choice unless given
  long long seconds = 5;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--seconds") == 0 && has_value) seconds = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--accordd") == 0 && has_value) accordd_path = argv[++i];
    else if (std::strcmp(argv[i], "--config") == 0 && has_value) config = argv[++i];
    else if (std::strcmp(argv[i], "--ring-pollers") == 0 && has_value) ring_pollers = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--seconds S] [--accordd PATH] [--config throughput|sessions] [--ring-pollers N]\n",
                   argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  constexpr int kSessions = 256;
  unsetenv("ACCORD_SESSION_SOCKET");  // Runtime::connect must find the spawned daemon's channel
  // Room for the 256 clients, the observer, and a margin.
  std::vector<std::string> args = {"--devices", "host", "--max-sessions", std::to_string(kSessions + 16)};
  if (!ring_pollers.empty()) args.insert(args.end(), {"--ring-pollers", ring_pollers});
  DaemonProcess accordd(accordd_path, args);
  std::printf("daemon_scale_bench: accordd %s (pid %d, ring pollers: %s), clients over the submission ring\n",
              accordd_path.c_str(), static_cast<int>(accordd.pid()),
              ring_pollers.empty() ? "accordd's default" : ring_pollers.c_str());
  if (config.empty() || config == "throughput") throughput(accordd, std::chrono::seconds(seconds));
  if (config.empty() || config == "sessions") sessions(accordd, std::chrono::seconds(seconds * 2), kSessions);
  print_machine_line();
  return 0;
}
