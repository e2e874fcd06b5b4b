// A client in another language: python_client.py (python3-grpcio, python3-protobuf)
// discovers accordd's API through server reflection, builds its request types from the
// descriptors it fetched and calls the daemon, then asks the standard health service.
#include <catch2/catch.hpp>

#include <string>

#include "tests/integration/process_support.h"

namespace accord::integration {

TEST_CASE("another language's client drives the daemon through reflection", "[integration]") {
  DaemonProcess daemon;
  const std::string python = ACCORD_INTEGRATION_PYTHON;

  const RunResult modules =
      run_program({python, "-c", "import grpc, google.protobuf"}, daemon.dir(), "python-modules", std::chrono::seconds(20));
  {
    INFO(python << " cannot import grpc and google.protobuf; scripts/install-deps.sh installs python3-grpcio and "
                   "python3-protobuf: "
                << modules.report);
    REQUIRE(modules.status.success());
  }

  const RunResult run = run_program({python, ACCORD_INTEGRATION_PYTHON_CLIENT, "unix:" + daemon.grpc_socket()},
                                    daemon.dir(), "python-client", std::chrono::seconds(40));
  INFO(run.report);
  CHECK(run.status.success());
  CHECK(run.out.find("service accord.v1.Accord") != std::string::npos);
  CHECK(run.out.find("service grpc.reflection.v1alpha.ServerReflection") != std::string::npos);
  CHECK(run.out.find("device 0 kind host") != std::string::npos);
  CHECK(run.out.find("GetSessionInfo without a session: UNAUTHENTICATED") != std::string::npos);
  CHECK(run.out.find("health: SERVING") != std::string::npos);
  CHECK(run.out.find("\nOK\n") != std::string::npos);

  const ExitStatus stopped = daemon.stop();
  INFO(daemon.report());
  REQUIRE(stopped.success());
}

}  // namespace accord::integration
