// "The hot path (submit, complete, lease) does not allocate", on the client's side of the
// ring: a client connected to an accordd (started in this process on sockets in a fresh
// temporary directory) submits a prepared host graph, waits for it and drops its
// completion, counting operator new on the client's thread only (accordd's threads are
// not counted: its side has its own checks).
#include <catch2/catch.hpp>

#include <spdlog/spdlog.h>

#include "accord/accord.h"
#include "daemon/service/daemon.h"
#include "tests/conformance/daemon_under_test.h"
#include "tests/support/counting_new.h"

namespace {

using accord::testing::allocations_during;

DaemonUnderTest start_daemon() {
  DaemonUnderTest d;
  if (!d.make_socket_dir("accord-ring-alloc")) return d;
  spdlog::set_level(spdlog::level::warn);
  accord::service::DaemonConfig config;
  config.grpc_socket = d.dir + "/accord.sock";
  config.session_socket = d.dir + "/session.sock";
  config.socket_mode = 0600;
  config.worker_threads = 1;
  auto started = accord::service::Daemon::start(config);
  if (!started.ok()) {
    d.status = started.status();
    return d;
  }
  d.daemon = std::move(started).value();
  return d;
}

// Submit, wait and drop `rounds` times, from the calling thread; the allocations made there.
std::size_t allocations_per_rounds(const accord::ExecutableGraph& exe, int rounds, bool& all_ok) {
  all_ok = true;
  return allocations_during([&] {
    for (int i = 0; i < rounds; ++i) {
      auto done = exe.submit();
      if (!done.ok()) {
        all_ok = false;
        continue;
      }
      if (!done.value().wait().ok()) all_ok = false;
    }
  });
}

}  // namespace

TEST_CASE("a ring client's submit, wait and drop of a prepared graph allocate nothing", "[service][ring][alloc]") {
  DaemonUnderTest d = start_daemon();
  INFO(d.status.to_string());
  REQUIRE(d.daemon != nullptr);
  const bool spinning = GENERATE(true, false);
  INFO((spinning ? "a spinning waiter" : "a sleeping waiter"));
  accord::RuntimeOptions options;
  options.ring_spin = spinning ? std::chrono::microseconds(100'000) : std::chrono::microseconds(0);
  auto runtime = accord::Runtime::connect(d.dir + "/accord.sock", options);
  INFO(runtime.status().to_string());
  REQUIRE(runtime.ok());
  auto buffer = runtime.value().allocate(4096);
  REQUIRE(buffer.ok());
  accord::Graph graph = runtime.value().graph();
  REQUIRE(graph.fill(buffer.value().view(), 7).ok());
  auto exe = std::move(graph).prepare();
  REQUIRE(exe.ok());

  bool ok = false;
  allocations_per_rounds(exe.value(), 200, ok);  // first uses: pools and tickets fill up here
  REQUIRE(ok);
  const std::size_t allocations = allocations_per_rounds(exe.value(), 500, ok);
  REQUIRE(ok);
  CHECK(allocations == 0);
}
