// Daemon transport only: Runtime::options() reports the limits accordd granted the
// session (its configuration caps what a client asks for), and those are the limits
// the session runs under. The embedded transport grants what was asked (checked here
// too, for contrast). Starts an accordd of its own, with low caps, beside the suite's.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include <memory>
#include <string>

#include "daemon/service/daemon.h"
#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

namespace {

constexpr std::size_t kCapSubmissions = 8;
constexpr std::size_t kCapGraphSlots = 1;
constexpr std::uint64_t kCapBudget = 1 << 20;

// An accordd whose session limits are the caps above; removed with its sockets.
class CappedDaemon {
 public:
  CappedDaemon() {
    char pattern[] = "/tmp/accord-granted-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    dir_ = pattern;
    service::DaemonConfig config;
    config.grpc_socket = dir_ + "/accord.sock";
    config.session_socket = dir_ + "/session.sock";
    config.socket_mode = 0600;
    config.session_limits.max_submissions = kCapSubmissions;
    config.session_limits.graph_slots = kCapGraphSlots;
    config.session_limits.memory_budget = kCapBudget;
    auto started = service::Daemon::start(config);
    INFO(started.status().to_string());
    REQUIRE(started.ok());
    daemon_ = std::move(started).value();
  }
  ~CappedDaemon() {
    daemon_.reset();
    std::remove((dir_ + "/accord.sock").c_str());
    std::remove((dir_ + "/session.sock").c_str());
    rmdir(dir_.c_str());
  }
  std::string socket() const { return dir_ + "/accord.sock"; }

 private:
  std::string dir_;
  std::unique_ptr<service::Daemon> daemon_;
};

}  // namespace

TEST_CASE("over accordd, options() reports the limits granted, capped by accordd's configuration",
          "[conformance][daemon][bounds]") {
  CappedDaemon daemon;
  const bool ring = GENERATE(true, false);
  CAPTURE(ring);
  RuntimeOptions asked;
  asked.max_submissions = 64;  // above the caps
  asked.graph_slots = 2;
  asked.priority = -3;  // anyone may go lower: granted as asked
  asked.submission_ring = ring;
  const Runtime rt = UNWRAP(Runtime::connect(daemon.socket(), asked));
  CHECK(rt.options().max_submissions == kCapSubmissions);
  CHECK(rt.options().graph_slots == kCapGraphSlots);
  REQUIRE(rt.options().memory_budget.has_value());
  CHECK(*rt.options().memory_budget == kCapBudget);
  CHECK(rt.options().priority == -3);
  CHECK(rt.options().submission_ring == ring);  // the rest as asked

  // The granted limits are the ones in force: one slot per graph, and the budget.
  const Buffer b = make_buffer(rt, 8);
  const ExecutableGraph exec = fill_graph(rt, b.view(), 7);
  const Completion first = UNWRAP(exec.submit());
  CHECK_STATUS(exec.submit(), FailsWith(ErrorKind::Busy, {"slot"}));
  REQUIRE_OK(first.wait());
  CHECK_STATUS(rt.allocate(2 * kCapBudget), FailsWith(ErrorKind::Busy));
}

TEST_CASE("over accordd, limits asked below the caps are granted as asked", "[conformance][daemon][bounds]") {
  CappedDaemon daemon;
  RuntimeOptions asked;
  asked.max_submissions = 3;
  asked.memory_budget = 4096;
  const Runtime rt = UNWRAP(Runtime::connect(daemon.socket(), asked));
  CHECK(rt.options().max_submissions == 3);
  CHECK(rt.options().graph_slots == kCapGraphSlots);  // default 2 asked, capped
  REQUIRE(rt.options().memory_budget.has_value());
  CHECK(*rt.options().memory_budget == 4096);
  CHECK(rt.options().priority == 0);
}

TEST_CASE("embedded, options() reports what was asked", "[conformance][daemon][bounds]") {
  RuntimeOptions asked;
  asked.max_submissions = 64;
  asked.graph_slots = 2;
  const Runtime rt = UNWRAP(Runtime::embedded(asked));
  CHECK(rt.options().max_submissions == 64);
  CHECK(rt.options().graph_slots == 2);
  CHECK_FALSE(rt.options().memory_budget.has_value());
}
