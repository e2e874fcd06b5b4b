// daemon_latency_bench: what going through accordd costs per call, next to the embedded runtime,
// measured in one run: control calls as raw gRPC (ListDevices; GetSessionInfo with a session token;
// Allocate+Free of 1 KiB), allocate + drop, submit -> complete of a prepared one-region host graph
// (64-byte fill; accord.add_f32 of 16 floats) and a host lease round trip (map_write + release)
// through the public API over both transports. accordd is the real binary in a separate process,
// spawned here with its sockets in a temporary directory and stopped with SIGTERM at the end.
// Run: build-dbench/tests/bench/daemon_latency_bench [--iterations N] [--config NAME] [--accordd PATH]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include "accord/accord.h"
#include "accord/v1/accord.grpc.pb.h"
#include "proto/wire/session_channel.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/daemon_process.h"
#include "tests/bench/probe_graph.h"

namespace accord::bench {
namespace {

namespace v1 = accord::v1;

// ---------------------------------------------------------------- flags

struct DaemonFlags {
  std::size_t iterations = 0;  // 0: 2000 daemon / 20000 embedded iterations per row
  std::string config;          // one row by name; empty runs all
  std::string accordd = ACCORD_ACCORDD_PATH;
};

constexpr const char* kUsage =
    "  --iterations N  measured iterations per row and transport (default 2000 through accordd,\n"
    "                  20000 embedded)\n"
    "  --config NAME   one row: list_devices, session_info, alloc_free_1k, allocate_1k, fill64,\n"
    "                  add16, lease_write (default: all)\n"
    "  --accordd PATH  the accordd binary to spawn (default: the one built with this benchmark)\n";

DaemonFlags parse_daemon_flags(int argc, char** argv) {
  DaemonFlags flags;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      flags.iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--config") == 0 && has_value) {
      flags.config = argv[++i];
    } else if (std::strcmp(argv[i], "--accordd") == 0 && has_value) {
      flags.accordd = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--config NAME] [--accordd PATH]\n%s", argv[0], kUsage);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
  }
  return flags;
}

// accordd itself: DaemonProcess (daemon_process.h).

// ---------------------------------------------------------------- a raw session

// A session opened by hand as client/src/daemon/daemon_connection.cpp does (Hello ->
// Welcome on the session channel, then the token on every gRPC call), so the raw stub can
// call GetSessionInfo, Allocate and Free: the public API does not expose the token.
struct RawSession {
  UniqueFd channel;  // the session lives as long as this connection
  std::uint64_t session_id = 0;
  std::string token;
  std::unique_ptr<v1::Accord::Stub> stub;

  void prepare(grpc::ClientContext& context) const {
    context.AddMetadata(std::string(wire::kSessionMetadataKey), token);
  }
};

std::unique_ptr<RawSession> open_raw_session(const std::string& grpc_socket, const std::string& session_socket) {
  auto session = std::make_unique<RawSession>();
  session->channel = unwrap(wire::connect_unix(session_socket, SOCK_SEQPACKET), "connect to the session channel");
  wire::HelloPayload hello;
  wire::set_text(hello.label, "daemon_latency_bench");
  check(wire::send_payload(session->channel.get(), wire::MessageType::Hello, 0, hello), "send Hello");
  auto reply = unwrap(wire::receive_message(session->channel.get()), "receive Welcome");
  if (!reply || reply->type() != wire::MessageType::Welcome) fail("accordd did not answer Hello with Welcome");
  const wire::WelcomePayload welcome = unwrap(reply->as<wire::WelcomePayload>(), "decode Welcome");
  session->session_id = welcome.session_id;
  session->token = wire::get_text(welcome.token);
  session->stub = v1::Accord::NewStub(
      grpc::CreateCustomChannel("unix:" + grpc_socket, grpc::InsecureChannelCredentials(), grpc::ChannelArguments()));
  return session;
}

void check_rpc(const grpc::Status& status, const char* what) {
  if (status.ok()) return;
  fail(std::string(what) + ": gRPC code " + std::to_string(status.error_code()) + ": " + status.error_message());
}

// ---------------------------------------------------------------- rows

// One timed iteration: the total and up to three phases of it, in ns.
struct Sample {
  double total_ns = 0;
  std::array<double, 3> phase_ns{};
};

// A row's state on one transport: what one iteration does, and a check of the result
// after the measured iterations (a benchmark of work that did not happen measures nothing).
struct Trial {
  std::vector<const char*> phases;  // names of Sample::phase_ns entries; empty for one step
  std::function<Sample()> iterate;
  std::function<bool()> verify = [] { return true; };
};

struct Row {
  const char* name;
  const char* what;
  std::function<Trial(RawSession&)> raw;        // daemon only: raw gRPC stub calls
  std::function<Trial(const Runtime&)> api;     // the public API: both transports
};

Trial list_devices(RawSession& s) {
  Trial t;
  t.iterate = [&s] {
    const Clock::time_point begin = Clock::now();
    grpc::ClientContext context;  // no session needed
    v1::ListDevicesResponse response;
    check_rpc(s.stub->ListDevices(&context, v1::ListDevicesRequest(), &response), "ListDevices");
    const Clock::time_point end = Clock::now();
    if (response.devices_size() < 1) fail("ListDevices listed no device");
    return Sample{elapsed_ns(begin, end), {}};
  };
  return t;
}

Trial session_info(RawSession& s) {
  Trial t;
  t.iterate = [&s] {
    const Clock::time_point begin = Clock::now();
    grpc::ClientContext context;
    s.prepare(context);
    v1::SessionInfo response;
    check_rpc(s.stub->GetSessionInfo(&context, v1::GetSessionInfoRequest(), &response), "GetSessionInfo");
    const Clock::time_point end = Clock::now();
    if (response.session_id() != s.session_id) fail("GetSessionInfo answered for another session");
    return Sample{elapsed_ns(begin, end), {}};
  };
  return t;
}

Trial alloc_free_raw(RawSession& s) {
  Trial t;
  t.phases = {"Allocate", "Free"};
  t.iterate = [&s] {
    const Clock::time_point t0 = Clock::now();
    v1::AllocateResponse allocated;
    {
      grpc::ClientContext context;
      s.prepare(context);
      v1::AllocateRequest request;
      request.set_bytes(1024);
      check_rpc(s.stub->Allocate(&context, request, &allocated), "Allocate");
    }
    const Clock::time_point t1 = Clock::now();
    {
      grpc::ClientContext context;
      s.prepare(context);
      v1::FreeRequest request;
      request.set_buffer(allocated.buffer());
      v1::FreeResponse response;
      check_rpc(s.stub->Free(&context, request, &response), "Free");
    }
    const Clock::time_point t2 = Clock::now();
    return Sample{elapsed_ns(t0, t2), {elapsed_ns(t0, t1), elapsed_ns(t1, t2)}};
  };
  return t;
}

Trial allocate_drop(const Runtime& runtime) {
  Trial t;
  t.phases = {"allocate", "drop"};
  t.iterate = [runtime] {
    const Clock::time_point t0 = Clock::now();
    Clock::time_point t1;
    {
      Buffer buffer = unwrap(runtime.allocate(1024), "allocate");
      t1 = Clock::now();
    }  // dropped here
    const Clock::time_point t2 = Clock::now();
    return Sample{elapsed_ns(t0, t2), {elapsed_ns(t0, t1), elapsed_ns(t1, t2)}};
  };
  return t;
}


// submit -> wait -> drop of a prepared one-region host graph, as submit_latency_bench builds
// it; the drop is timed too (through accordd it is a ReleaseCompletion call).
Trial submit_wait(const Runtime& runtime, GraphKind kind) {
  const ProbeGraph probe = make_probe_graph(runtime, kind);
  const ExecutableGraph exe = probe.exe;

  Trial t;
  t.phases = {"submit", "wait", "drop"};
  t.iterate = [exe] {
    const Clock::time_point t0 = Clock::now();
    Clock::time_point t1, t2;
    {
      Result<Completion> c = exe.submit();
      t1 = Clock::now();
      check(c.status(), "submit");
      check(c->wait(), "wait");
      t2 = Clock::now();
    }  // the completion is dropped here, freeing its graph slot
    const Clock::time_point t3 = Clock::now();
    return Sample{elapsed_ns(t0, t3), {elapsed_ns(t0, t1), elapsed_ns(t1, t2), elapsed_ns(t2, t3)}};
  };
  t.verify = [probe] {
    return probe.verify();
  };
  return t;
}

// map_write + release of a 1 KiB host-visible buffer with no device work pending.
Trial lease_write(const Runtime& runtime) {
  Buffer buffer = unwrap(runtime.allocate(1024), "allocate");
  auto counter = std::make_shared<std::uint8_t>(0);
  Trial t;
  t.phases = {"map_write", "release"};
  t.iterate = [buffer, counter] {
    const Clock::time_point t0 = Clock::now();
    WriteGuard guard = unwrap(buffer.map_write(), "map_write");
    guard.bytes()[0] = std::byte{++*counter};
    const Clock::time_point t1 = Clock::now();
    guard.release();
    const Clock::time_point t2 = Clock::now();
    return Sample{elapsed_ns(t0, t2), {elapsed_ns(t0, t1), elapsed_ns(t1, t2)}};
  };
  t.verify = [buffer, counter] {
    ReadGuard guard = unwrap(buffer.map_read(), "map_read");
    return guard.bytes()[0] == std::byte{*counter};
  };
  return t;
}

std::vector<Row> all_rows() {
  return {
      {"list_devices", "ListDevices, raw stub, no session", list_devices, nullptr},
      {"session_info", "GetSessionInfo, raw stub, session token", session_info, nullptr},
      {"alloc_free_1k", "Allocate + Free 1 KiB, raw stub", alloc_free_raw, nullptr},
      {"allocate_1k", "runtime.allocate(1024) + drop", nullptr, allocate_drop},
      {"fill64", "submit -> wait -> drop: fill of 64 bytes", nullptr,
       [](const Runtime& r) { return submit_wait(r, GraphKind::Fill64); }},
      {"add16", "submit -> wait -> drop: add_f32 of 16 floats", nullptr,
       [](const Runtime& r) { return submit_wait(r, GraphKind::AddF32x16); }},
      {"lease_write", "map_write + release, 1 KiB", nullptr, lease_write},
  };
}

// ---------------------------------------------------------------- measuring

struct Measured {
  Summary total_us;
  std::vector<double> phase_p50_us;
  double client_cpu_us = -1;  // CPU of this process per iteration (every thread)
  double daemon_cpu_us = -1;  // CPU of accordd per iteration; -1 for embedded or unreadable
  bool verified = false;
};

Measured measure(Trial& trial, std::size_t warmup, std::size_t iterations, std::optional<clockid_t> daemon_clock) {
  for (std::size_t i = 0; i < warmup; ++i) trial.iterate();
  std::vector<double> total(iterations);
  std::vector<std::vector<double>> phases(trial.phases.size(), std::vector<double>(iterations));
  const double client0 = process_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  const double daemon0 = daemon_clock ? process_cpu_ns(*daemon_clock) : -1;
  for (std::size_t i = 0; i < iterations; ++i) {
    const Sample s = trial.iterate();
    total[i] = s.total_ns / 1000.0;
    for (std::size_t k = 0; k < phases.size(); ++k) phases[k][i] = s.phase_ns[k] / 1000.0;
  }
  const double client1 = process_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  const double daemon1 = daemon_clock ? process_cpu_ns(*daemon_clock) : -1;

  Measured m;
  m.verified = trial.verify();
  m.total_us = summarize(total);
  for (auto& p : phases) m.phase_p50_us.push_back(summarize(p).p50);
  const double n = static_cast<double>(iterations);
  if (client0 >= 0 && client1 >= 0) m.client_cpu_us = (client1 - client0) / n / 1000.0;
  if (daemon0 >= 0 && daemon1 >= 0) m.daemon_cpu_us = (daemon1 - daemon0) / n / 1000.0;
  return m;
}

// The cost of one Clock::now(), which rows with steps pay 1-2 extra times inside their total.
double clock_read_ns() {
  constexpr int kReads = 100000;
  const Clock::time_point begin = Clock::now();
  for (int i = 0; i < kReads; ++i) {
    const Clock::time_point now = Clock::now();
    asm volatile("" : : "r"(&now) : "memory");
  }
  return elapsed_ns(begin, Clock::now()) / kReads;
}

// ---------------------------------------------------------------- counting RPCs

// Counts client calls by method. Registered only in a forked child that repeats each
// daemon row a few times, so the timed process runs without any interceptor.
class CountingInterceptor final : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override { methods->Proceed(); }
};

class CountingFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  // Called once per call a ClientContext starts; counts it under its method's short name.
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo* info) override {
    std::string method = info->method();
    method = method.substr(method.rfind('/') + 1);
    if (info->type() == grpc::experimental::ClientRpcInfo::Type::SERVER_STREAMING) method += "(stream)";
    std::lock_guard lock(mu_);
    auto it = std::find_if(counts_.begin(), counts_.end(), [&](const auto& c) { return c.first == method; });
    if (it == counts_.end()) {
      counts_.emplace_back(std::move(method), 1);
    } else {
      ++it->second;
    }
    return new CountingInterceptor;
  }
  // The counts since the last take(), in the order of each method's first call.
  std::vector<std::pair<std::string, std::uint64_t>> take() {
    std::lock_guard lock(mu_);
    return std::exchange(counts_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, std::uint64_t>> counts_;
};

struct RpcCount {
  double per_iteration = 0;
  std::string methods;  // "Submit 1, WaitCompletion(stream) 1, ..."
};

constexpr std::size_t kCountIterations = 50;

// In a child forked before this process touched gRPC: opens its own sessions, repeats each
// daemon row kCountIterations times with the counting interceptor and writes one line per
// row ("name<TAB>total<TAB>methods") to `fd`.
[[noreturn]] void count_rpcs_in_child(int fd, const DaemonProcess& daemon, const std::vector<Row>& rows) {
  static CountingFactory factory;
  grpc::experimental::RegisterGlobalClientInterceptorFactory(&factory);
  std::string out;
  {
    Runtime runtime = unwrap(Runtime::connect(daemon.grpc_socket()), "Runtime::connect");
    std::unique_ptr<RawSession> raw = open_raw_session(daemon.grpc_socket(), daemon.session_socket());
    for (const Row& row : rows) {
      Trial trial = row.raw ? row.raw(*raw) : row.api(runtime);
      for (int i = 0; i < 5; ++i) trial.iterate();
      factory.take();
      for (std::size_t i = 0; i < kCountIterations; ++i) trial.iterate();
      const auto counts = factory.take();
      std::uint64_t total = 0;
      std::string methods;
      for (const auto& [method, n] : counts) {
        total += n;
        char part[128];
        std::snprintf(part, sizeof(part), "%s%s %g", methods.empty() ? "" : ", ", method.c_str(),
                      static_cast<double>(n) / kCountIterations);
        methods += part;
      }
      out += std::string(row.name) + "\t" + std::to_string(total) + "\t" + methods + "\n";
    }
  }
  for (std::size_t done = 0; done < out.size();) {
    const ssize_t n = write(fd, out.data() + done, out.size() - done);
    if (n <= 0) std::_Exit(1);
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  std::_Exit(0);
}

std::map<std::string, RpcCount> count_rpcs(const DaemonProcess& daemon, const std::vector<Row>& rows) {
  int fds[2];
  if (pipe(fds) != 0) fail(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    close(fds[0]);
    count_rpcs_in_child(fds[1], daemon, rows);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the RPC-counting child failed");

  std::map<std::string, RpcCount> counts;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end - begin);
    begin = end == std::string::npos ? text.size() : end + 1;
    const std::size_t tab1 = line.find('\t');
    const std::size_t tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string::npos || tab2 == std::string::npos) continue;
    RpcCount& c = counts[line.substr(0, tab1)];
    c.per_iteration = std::strtod(line.substr(tab1 + 1, tab2 - tab1 - 1).c_str(), nullptr) / kCountIterations;
    c.methods = line.substr(tab2 + 1);
  }
  return counts;
}

// ---------------------------------------------------------------- printing

struct RowResult {
  const Row* row;
  std::vector<const char*> phases;  // the trial's step names
  std::optional<Measured> daemon, embedded;
  RpcCount rpcs;
};

void print_us(double v) {
  if (v < 0) {
    std::printf(" %8s |", "-");
  } else {
    std::printf(" %8.2f |", v);
  }
}

void print_cells(const std::optional<Measured>& m) {
  if (!m) {
    for (int i = 0; i < 4; ++i) std::printf(" %8s |", "-");
    return;
  }
  print_us(m->total_us.p50);
  print_us(m->total_us.p90);
  print_us(m->total_us.p99);
  print_us(m->total_us.mean);
}

std::string phase_text(const std::vector<const char*>& names, const Measured& m) {
  std::string text;
  for (std::size_t k = 0; k < m.phase_p50_us.size() && k < names.size(); ++k) {
    char part[64];
    std::snprintf(part, sizeof(part), "%s%s %.2f", k ? ", " : "", names[k], m.phase_p50_us[k]);
    text += part;
  }
  return text.empty() ? "(one step)" : text;
}

const RowResult* find_row(const std::vector<RowResult>& results, std::string_view name) {
  for (const RowResult& r : results)
    if (name == r.row->name) return &r;
  return nullptr;
}

// Where accordd's time goes, with this run's numbers where the rows ran.
void print_footnote(const std::vector<RowResult>& results) {
  std::printf("\nThrough accordd each step of the public API is one synchronous gRPC call on the Unix socket:\n");
  std::printf("submit is a unary Submit, wait() a server-streaming WaitCompletion (one event, then the stream\n");
  std::printf("ends) and dropping the last Completion a unary ReleaseCompletion; map_write + release are\n");
  std::printf("AcquireLease + ReleaseLease; allocate is Allocate plus MapBuffer on the session channel and an\n");
  std::printf("mmap of the memfd, its drop a Free. Each call pays protobuf, HTTP/2 framing and a round trip\n");
  std::printf("over the socket with a thread wake-up on both sides; the embedded runtime makes function calls.\n");
  const RowResult* info = find_row(results, "session_info");
  for (const char* name : {"fill64", "add16", "lease_write"}) {
    const RowResult* r = find_row(results, name);
    if (!info || !r || !r->embedded) continue;
    const double calls = r->rpcs.per_iteration;
    std::printf("  %-12s %.0f RPCs x %.1f us (p50 of one trivial call, GetSessionInfo) = %.0f us against the\n",
                (std::string(name) + ":").c_str(), calls, info->daemon->total_us.p50,
                calls * info->daemon->total_us.p50);
    std::printf("  %-12s row's %.0f us p50; the work itself (the embedded p50) is %.2f us\n", "",
                r->daemon->total_us.p50, r->embedded->total_us.p50);
  }
  std::printf("The shared-memory submission ring planned in ARCHITECTURE.md (submit and completion entries in\n");
  std::printf("a memfd shared with accordd, futex doorbells that spin briefly, then sleep) takes submission,\n");
  std::printf("completion and leases off gRPC: these RPCs go, and what stays is the engine's own time plus a\n");
  std::printf("doorbell wake-up in each direction. The control calls (Allocate, Free, ...) stay on gRPC.\n");
}

}  // namespace
}  // namespace accord::bench

int main(int argc, char** argv) {
  using namespace accord;
  using namespace accord::bench;
  const DaemonFlags flags = parse_daemon_flags(argc, argv);
  const std::size_t daemon_iterations = flags.iterations ? flags.iterations : 2000;
  const std::size_t embedded_iterations = flags.iterations ? flags.iterations : 20000;
  const std::size_t daemon_warmup = flags.iterations ? std::min<std::size_t>(100, flags.iterations) : 200;
  const std::size_t embedded_warmup = flags.iterations ? std::min<std::size_t>(100, flags.iterations) : 2000;

  std::vector<Row> rows;
  for (Row& row : all_rows())
    if (flags.config.empty() || flags.config == row.name) rows.push_back(std::move(row));
  if (rows.empty()) {
    std::fprintf(stderr, "no row named '%s'\n%s", flags.config.c_str(), kUsage);
    return 2;
  }
  unsetenv("ACCORD_SESSION_SOCKET");  // Runtime::connect must find the spawned daemon's channel

  DaemonProcess daemon(flags.accordd);
  const std::optional<clockid_t> daemon_clock = cpu_clock_of(daemon.pid());
  // Before this process touches gRPC: a forked child counts the calls each row makes.
  const std::map<std::string, RpcCount> rpcs = count_rpcs(daemon, rows);

  std::vector<RowResult> results;
  {
    Runtime remote = unwrap(Runtime::connect(daemon.grpc_socket()), "Runtime::connect");
    std::unique_ptr<RawSession> raw = open_raw_session(daemon.grpc_socket(), daemon.session_socket());
    for (const Row& row : rows) {
      RowResult r{&row, {}, std::nullopt, std::nullopt, {}};
      if (auto it = rpcs.find(row.name); it != rpcs.end()) r.rpcs = it->second;
      {
        Trial trial = row.raw ? row.raw(*raw) : row.api(remote);
        r.phases = trial.phases;
        r.daemon = measure(trial, daemon_warmup, daemon_iterations, daemon_clock);
      }
      if (row.api) {
        // A fresh embedded runtime per row, gone before the next daemon row: its workers
        // never compete with accordd for the cores.
        Runtime local = unwrap(Runtime::embedded(), "Runtime::embedded");
        Trial trial = row.api(local);
        r.embedded = measure(trial, embedded_warmup, embedded_iterations, std::nullopt);
      }
      results.push_back(std::move(r));
    }
  }  // every handle is dropped (and its session closed) before accordd is stopped
  const int daemon_exit = daemon.stop();

  bool all_verified = true;
  for (const RowResult& r : results)
    all_verified = all_verified && r.daemon->verified && (!r.embedded || r.embedded->verified);

  std::printf("daemon_latency_bench: the same calls through accordd (a separate process, Runtime::connect\n");
  std::printf("  or a raw gRPC stub over its Unix socket) and through the embedded runtime (Runtime::embedded(),\n");
  std::printf("  default options: 2 engine workers; accordd also runs its default 2), measured in one run\n");
  std::printf("  times in us, wall clock per iteration; warm-up + measured iterations per row: daemon %zu + %zu,\n",
              daemon_warmup, daemon_iterations);
  std::printf("  embedded %zu + %zu; rows with steps read the clock between them: each read adds %.0f ns\n",
              embedded_warmup, embedded_iterations, clock_read_ns());
  std::printf("  accordd: %s (exit status %d after SIGTERM)\n", flags.accordd.c_str(), daemon_exit);
  print_machine_line();
  std::printf("\n");
  std::printf("%-13s | %4s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %7s\n", "", "RPCs", "daemon", "", "",
              "", "embedded", "", "", "", "d/e");
  std::printf("%-13s | %4s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %7s\n", "row", "/it", "p50", "p90",
              "p99", "mean", "p50", "p90", "p99", "mean", "p50");
  std::printf("--------------+------+----------+----------+----------+----------+----------+----------+----------"
              "+----------+--------\n");
  for (const RowResult& r : results) {
    std::printf("%-13s | %4.0f |", r.row->name, r.rpcs.per_iteration);
    print_cells(r.daemon);
    print_cells(r.embedded);
    if (r.embedded && r.embedded->total_us.p50 > 0) {
      std::printf(" %6.1fx\n", r.daemon->total_us.p50 / r.embedded->total_us.p50);
    } else {
      std::printf(" %7s\n", "-");
    }
  }
  std::printf("\nrows:\n");
  for (const RowResult& r : results) std::printf("  %-13s %s\n", r.row->name, r.row->what);

  std::printf("\nwhere the time goes: p50 of each step (us); CPU per iteration (us) of this process (all its\n");
  std::printf("threads) and of accordd; the calls each daemon iteration made (counted by a gRPC interceptor\n");
  std::printf("in a separate client process over %zu iterations, so no timed call ran through it)\n\n",
              kCountIterations);
  std::printf("%-13s | %-8s | %-40s | %7s | %7s | %s\n", "row", "via", "step p50s", "cpu cli", "cpu dmn",
              "gRPC calls per iteration");
  std::printf("--------------+----------+------------------------------------------+---------+---------+---------"
              "---------------\n");
  for (const RowResult& r : results) {
    std::printf("%-13s | %-8s | %-40s |", r.row->name, "accordd", phase_text(r.phases, *r.daemon).c_str());
    std::printf(" %7.2f | ", r.daemon->client_cpu_us);
    if (r.daemon->daemon_cpu_us >= 0) {
      std::printf("%7.2f |", r.daemon->daemon_cpu_us);
    } else {
      std::printf("%7s |", "n/a");
    }
    std::printf(" %s\n", r.rpcs.methods.c_str());
    if (r.embedded) {
      std::printf("%-13s | %-8s | %-40s | %7.2f | %7s | %s\n", "", "embedded",
                  phase_text(r.phases, *r.embedded).c_str(), r.embedded->client_cpu_us, "-", "none");
    }
  }
  print_footnote(results);
  if (!all_verified) {
    std::fprintf(stderr, "a row's work did not produce its result\n");
    return 1;
  }
  return 0;
}
