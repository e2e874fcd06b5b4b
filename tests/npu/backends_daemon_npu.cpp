// The daemon transport for the [npu] suite: one accordd (accord::service::Daemon) in
// this test process, configured from accordd's own command line
// (`--npu-emulator --devices host --watchdog-seconds 1`, through
// accord::daemon_config::load_config as main.cpp does), so the suite also shows that
// --npu-emulator points the Level Zero loader at the emulator and adds level_zero to an
// explicit device list. Every runtime is a client session over the real sockets.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/config/accordd_config.h"
#include "daemon/service/daemon.h"
#include "tests/conformance/conformance_runtime.h"
#include "tests/conformance/daemon_under_test.h"

namespace {

DaemonUnderTest& daemon_under_test() {
  static DaemonUnderTest instance = [] {
    DaemonUnderTest d;
    if (!d.make_socket_dir("accord-npu")) return d;
    spdlog::set_level(spdlog::level::warn);
    const std::vector<std::string> args{"accordd",          "--npu-emulator",
                                        "--devices",        "host",
                                        "--watchdog-seconds", "1",
                                        "--workers",        "2",
                                        "--grpc-socket",    d.dir + "/accord.sock",
                                        "--session-socket", d.dir + "/session.sock",
                                        "--socket-mode",    "0600",
                                        "--config",         "/dev/null"};
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    auto loaded = accord::daemon_config::load_config(static_cast<int>(argv.size()), argv.data());
    if (!loaded.ok()) {
      d.status = loaded.status();
      return d;
    }
    accord::service::DaemonConfig config = loaded->daemon;
    config.session_limits.max_submissions = 4096;
    config.session_limits.graph_slots = 256;
    auto started = accord::service::Daemon::start(config);
    if (!started.ok()) {
      d.status = accord::unsupported_error("accordd did not start: " + started.status().to_string());
      return d;
    }
    d.daemon = std::move(started).value();
    return d;
  }();
  return instance;
}

// Stops accordd when the run ends, before the exit handlers: the NPU emulator keeps its
// events' mutex and condition variable in a function-local static, constructed after
// this daemon (at the first fence wait), so it would be destroyed first, while the
// daemon's level_zero completion thread still waits on it, and exit() would hang in
// pthread_cond_destroy.
struct StopDaemonAtEnd : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats& stats) override {
    daemon_under_test().daemon.reset();
    TestEventListenerBase::testRunEnded(stats);
  }
};
CATCH_REGISTER_LISTENER(StopDaemonAtEnd)

}  // namespace

accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options) {
  if (accord::Status s = options.validate(); !s.ok()) return s;
  DaemonUnderTest& d = daemon_under_test();
  if (!d.status.ok()) return d.status;
  return accord::Runtime::connect(d.dir + "/accord.sock", options);
}

const char* conformance_transport_name() { return "daemon"; }

std::span<const ConformanceGap> conformance_known_gaps() { return {}; }
