// Device backends as accordd's configuration picks them, end to end: the --devices flag
// through the composition root, ListDevices and `accordctl devices`. The null backend
// (a gpu:0 that does nothing, opened only when named) stands in for a real GPU.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/integration/process_support.h"

namespace accord::integration {

TEST_CASE("accordd --devices host,null lists the host and the null GPU as present", "[integration][devices]") {
  DaemonOptions options;
  options.extra_args = {"--devices", "host,null"};
  DaemonProcess daemon(options);
  const std::vector<DeviceRow> devices = list_devices(daemon);
  INFO(daemon.report());
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].id == "host");
  CHECK(devices[0].backend == "host");
  CHECK(devices[0].state == "present");
  CHECK(devices[0].reason.empty());
  CHECK(devices[1].id == "gpu:0");
  CHECK(devices[1].backend == "null");
  CHECK(devices[1].name == "null");
  CHECK(devices[1].state == "present");
  // accordd logs what it opened.
  CHECK(daemon.stderr_text().find("gpu:0 'null'") != std::string::npos);
  CHECK(daemon.stop().success());
}

TEST_CASE("accordd --devices with a backend this build lacks exits naming the built ones", "[integration][devices]") {
  TempDir dir("accord-int");
  write_file(dir.file("accordd.toml"), "# integration test: flags only\n");
  const RunResult r = run_program({accordd_path(), "--config", dir.file("accordd.toml"), "--grpc-socket",
                                   dir.file("accord.sock"), "--session-socket", dir.file("session.sock"),
                                   "--devices", "host,doesnotexist"},
                                  dir, "accordd", 10s);
  INFO(r.report);
  CHECK(r.status.exited);
  CHECK(r.status.code != 0);
  CHECK(r.err.find("doesnotexist") != std::string::npos);
  CHECK(r.err.find("built: host, null") != std::string::npos);
}

}  // namespace accord::integration
