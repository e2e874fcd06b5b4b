// The daemon transport for the conformance suite: one accordd (accord::service::Daemon)
// started in this test process on sockets in a fresh temporary directory, and every
// runtime a client session over the real gRPC socket and session channel
// (accord::Runtime::connect). The same test files as the embedded suite.
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/spdlog.h>

#include "daemon/service/daemon.h"
#ifdef ACCORD_TEST_GPU_EXECUTOR
#include "daemon/executor/open_gpu_executors.h"
#endif
#include "tests/conformance/conformance_runtime.h"
#include "tests/conformance/daemon_under_test.h"

namespace {

DaemonUnderTest& daemon_under_test() {
  static DaemonUnderTest instance = [] {
    DaemonUnderTest d;
    if (!d.make_socket_dir("accord-conformance")) return d;
    spdlog::set_level(spdlog::level::warn);  // one session per test case: keep the log quiet
    accord::service::DaemonConfig config;
    config.grpc_socket = d.dir + "/accord.sock";
    config.session_socket = d.dir + "/session.sock";
    config.socket_mode = 0600;
    // Generous ceilings: each test's session asks for the limits it wants.
    config.session_limits.max_submissions = 4096;
    config.session_limits.graph_slots = 256;
    config.max_objects_per_session = 1 << 20;
    config.worker_threads = 2;
#ifdef ACCORD_TEST_GPU_EXECUTOR
    // The [gpu] suite drives GPUs as accordd does: each in an executor process (this
    // build's accordd binary), so a fault case loses only that executor.
    config.device_settings.gpu_executor_binary = ACCORD_TEST_GPU_EXECUTOR;
    config.device_settings.gpu_executor_factory = &accord::executor::open_gpu_executors_factory;
#endif
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

}  // namespace

accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options) {
  // Option validation is the client's job on both transports: check before starting.
  if (accord::Status s = options.validate(); !s.ok()) return s;
  DaemonUnderTest& d = daemon_under_test();
  if (!d.status.ok()) return d.status;
  return accord::Runtime::connect(d.dir + "/accord.sock", options);
}

const char* conformance_transport_name() { return "daemon"; }

std::span<const ConformanceGap> conformance_known_gaps() {
  static const ConformanceGap kGaps[] = {
      {"poll never runs work", "the daemon runs work on its own workers; RuntimeOptions::worker_threads = 0 (work "
                               "only inside wait) exists only in the embedded transport"},
      {"RuntimeOptions::devices names the backends the engine opens",
       "accordd opens the devices its own configuration names; RuntimeOptions::devices applies to the embedded "
       "transport only"},
  };
  return kGaps;
}
