// accordd and its clients as real, separate processes: many clients at once, a client
// killed while its work is in flight. The clients are accord_integration_client
// (client_worker.cpp); the daemon-wide view comes from accordctl.
#include <signal.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/integration/process_support.h"

namespace accord::integration {
namespace {

// Bytes each `work` client allocates: inputs (2 vectors), scratch (4), results (3) of
// 64 x 64 f32 each (client_worker.cpp).
constexpr std::uint64_t kWorkBuffers = 3;
constexpr std::uint64_t kWorkBytes = 9 * 64 * 64 * 4;

Child spawn_client(const DaemonProcess& daemon, std::vector<std::string> args, const std::string& tag) {
  SpawnOptions options;
  options.argv = {client_worker_path()};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.stdout_path = daemon.dir().file(tag + ".stdout");
  options.stderr_path = daemon.dir().file(tag + ".stderr");
  return Child(std::move(options));
}

// `start_file`: the client connects and prepares, prints "prepared", and submits only
// once that file exists.
Child spawn_work(const DaemonProcess& daemon, std::uint64_t seed, std::uint64_t iterations,
                 const std::string& start_file = "") {
  std::vector<std::string> args = {"work", daemon.grpc_socket(), std::to_string(seed), std::to_string(iterations)};
  if (!start_file.empty()) args.push_back(start_file);
  return spawn_client(daemon, std::move(args), "work-" + std::to_string(seed));
}

// Waits for every child against one shared deadline; each must exit 0.
void require_all_succeed(std::vector<Child>& children, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (Child& child : children) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const ExitStatus status = child.wait_or_kill(std::max(left, std::chrono::milliseconds(1)));
    INFO(child.report());
    CHECK(status.success());
  }
}

void require_clean_stop(DaemonProcess& daemon) {
  const ExitStatus stopped = daemon.stop();
  INFO("accordd must drain and exit 0 on SIGTERM: " << daemon.report());
  REQUIRE(stopped.success());
}

}  // namespace

TEST_CASE("eight clients use one daemon at once", "[integration]") {
  DaemonProcess daemon;
  const DaemonCounters before = read_counters(daemon);

  constexpr std::uint64_t kClients = 8;
  constexpr std::uint64_t kIterations = 100;
  const std::string start = daemon.dir().file("start");
  std::vector<Child> clients;
  for (std::uint64_t seed = 1; seed <= kClients; ++seed)
    clients.push_back(spawn_work(daemon, seed, kIterations, start));
  // All eight connected and prepared: eight sessions live in the daemon at once. Then
  // they all start submitting together.
  for (Child& client : clients) {
    INFO(client.report());
    REQUIRE(client.wait_for_output("prepared", std::chrono::seconds(30)));
  }
  CHECK(list_sessions(daemon).size() == kClients);
  const DaemonCounters ready = read_counters(daemon);
  CHECK(ready.live_bytes == before.live_bytes + kClients * kWorkBytes);
  write_file(start, "go\n");
  require_all_succeed(clients, std::chrono::seconds(45));

  // Every session closes once its process is gone, and with it its memory.
  std::vector<SessionRow> left;
  const bool closed = eventually([&] { return (left = list_sessions(daemon)).empty(); }, std::chrono::seconds(10));
  DaemonCounters after;
  const bool memory_returned =
      eventually([&] { return (after = read_counters(daemon)).live_bytes == before.live_bytes; }, std::chrono::seconds(10));
  INFO("before: live " << before.live_bytes << ", submissions " << before.submissions << "; after: live "
                       << after.live_bytes << ", submissions " << after.submissions << ", completions "
                       << after.completions << ", allocations " << after.allocations << ", peak "
                       << after.peak_bytes << "; sessions left " << left.size());
  CHECK(closed);
  CHECK(memory_returned);
  CHECK(after.submissions - before.submissions == kClients * kIterations);
  CHECK(after.completions == after.submissions);
  CHECK(after.allocations - before.allocations == kClients * kWorkBuffers);
  CHECK(after.peak_bytes >= before.live_bytes + kClients * kWorkBytes);

  require_clean_stop(daemon);
}

TEST_CASE("accordctl stats shows how many of at most --ring-pollers threads serve rings, one when idle",
          "[integration]") {
  DaemonOptions options;
  options.extra_args = {"--ring-pollers", "3"};
  DaemonProcess daemon(options);
  DaemonCounters c;
  // No ring is open (accordctl's session opens none): one thread is all the sizing keeps.
  const bool one = eventually([&] { return (c = read_counters(daemon)).ring_pollers_serving == 1; },
                              std::chrono::seconds(10));
  INFO("serving " << c.ring_pollers_serving << " of " << c.ring_pollers_most);
  CHECK(one);
  CHECK(c.ring_pollers_most == 3);
  require_clean_stop(daemon);
}

TEST_CASE("a client killed mid-flight leaves the daemon and other clients unharmed, and its memory returns",
          "[integration]") {
  DaemonProcess daemon;
  const DaemonCounters before = read_counters(daemon);

  constexpr std::uint64_t kHeld = 64ull << 20;
  // Three seconds a submission: calibration runs on a loaded machine too, and a chain
  // sized for 1.5 s there can end before the sessions are listed once the load drops.
  Child holder = spawn_client(daemon, {"hold", daemon.grpc_socket(), std::to_string(kHeld), "3"}, "hold");
  {
    INFO(holder.report());
    REQUIRE(holder.wait_for_output("ready", std::chrono::seconds(30)));
  }
  // Its memory is live and its work is in flight (two ~3 s submissions, after two
  // short calibration runs that have finished).
  const std::vector<SessionRow> sessions = list_sessions(daemon);
  const SessionRow* held = nullptr;
  for (const SessionRow& s : sessions)
    if (s.pid == holder.pid()) held = &s;
  {
    INFO(holder.report());
    REQUIRE(held != nullptr);
  }
  INFO("holder's session: " << held->buffers << " buffers, " << held->live_bytes << " live bytes, "
                            << held->submissions << " submissions, " << held->completions << " completions, "
                            << held->pending << " pending");
  CHECK(held->live_bytes >= kHeld);
  REQUIRE(held->pending >= 1);
  REQUIRE(held->completions < held->submissions);

  std::vector<Child> clients;
  for (std::uint64_t seed = 11; seed <= 13; ++seed) clients.push_back(spawn_work(daemon, seed, 20));
  holder.signal(SIGKILL);
  const ExitStatus killed = holder.wait_or_kill(std::chrono::seconds(10));
  CHECK(killed.signal == SIGKILL);

  require_all_succeed(clients, std::chrono::seconds(45));

  // The killed session's work drains, then everything it owned is released.
  DaemonCounters after;
  const bool memory_returned =
      eventually([&] { return (after = read_counters(daemon)).live_bytes == before.live_bytes; }, std::chrono::seconds(15));
  INFO("baseline live bytes " << before.live_bytes << ", now " << after.live_bytes << "; submissions "
                              << after.submissions << ", completions " << after.completions);
  CHECK(memory_returned);
  CHECK(after.completions == after.submissions);
  std::vector<SessionRow> left;
  const bool closed = eventually([&] { return (left = list_sessions(daemon)).empty(); }, std::chrono::seconds(10));
  INFO("sessions left: " << left.size());
  CHECK(closed);

  // The daemon still serves new clients.
  std::vector<Child> late;
  late.push_back(spawn_work(daemon, 99, 5));
  require_all_succeed(late, std::chrono::seconds(30));
  CHECK(eventually([&] { return read_counters(daemon).live_bytes == before.live_bytes; }, std::chrono::seconds(10)));

  require_clean_stop(daemon);
}

// The engine is stopped after gRPC's shutdown (bounded at 0.5 s); the holder's
// work outlasts it by far (two runs of about 5 s): regions still running when the
// engine drains must finish cleanly and accordd must exit 0.
TEST_CASE("SIGTERM while a client's work is in flight drains it and exits 0", "[integration]") {
  DaemonProcess daemon;
  Child holder = spawn_client(daemon, {"hold", daemon.grpc_socket(), std::to_string(64ull << 20), "5"}, "hold");
  {
    INFO(holder.report());
    REQUIRE(holder.wait_for_output("ready", std::chrono::seconds(30)));
  }
  const auto stopping = std::chrono::steady_clock::now();
  const ExitStatus stopped = daemon.stop();
  const double drain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopping).count();
  INFO("accordd stopped after " << drain_s << " s: " << daemon.report());
  REQUIRE(stopped.success());
  CHECK(daemon.stderr_text().find("stopped") != std::string::npos);
  // The client outlives the daemon; its session simply ended.
  CHECK(holder.running());
}

}  // namespace accord::integration
