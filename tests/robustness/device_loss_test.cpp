// A device lost to the watchdog, as accordd reports it: the work's failure, the device's
// state and cause in ListDevices, devices_lost in GetStatistics and an error in the log.
// The host device stands in for a hung GPU: a plugin kernel sleeps past a short watchdog.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

// The default logger's output while it lives (the daemon in this process logs there).
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const {
    std::string out;
    for (const std::string& line : sink_->last_formatted()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

}  // namespace

TEST_CASE("a region past the watchdog marks its device lost in ListDevices, statistics and the log",
          "[daemon][robustness][devices]") {
  INFO("ACCORD_TEST_PLUGIN_PATH is empty: tests/plugins did not define accord_test_plugin");
  REQUIRE(std::string(ACCORD_TEST_PLUGIN_PATH) != "");
  CapturedLog log;
  TestDaemon d([](accord::service::DaemonConfig& config) {
    config.watchdog_timeout = std::chrono::milliseconds(100);
  });
  Stub& stub = d.stub();
  const Session s = d.open_session();

  std::uint64_t kernel = 0, buffer = 0, graph = 0, completion = 0;
  REQUIRE_OK(load_kernel(stub, s, sleep_request(600'000), &kernel));
  REQUIRE_OK(allocate(stub, s, 64, &buffer));
  v1::PrepareGraphRequest request;
  v1::KernelOp* op = request.add_nodes()->mutable_host_kernel();
  op->set_kernel(kernel);
  set_view(op->add_bindings(), buffer, 0, 4);
  REQUIRE_OK(prepare(stub, s, request, &graph));
  REQUIRE_OK(submit(stub, s, graph, {}, &completion));
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, completion, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_FAILED);
  CHECK_THAT(event.error(), Catch::Matchers::Contains("watchdog"));

  v1::ListDevicesResponse devices;
  REQUIRE_OK(stub.ListDevices(make_context(std::nullopt).get(), v1::ListDevicesRequest(), &devices));
  REQUIRE(devices.devices_size() >= 1);
  CHECK(devices.devices(0).state() == "lost");
  CHECK_THAT(devices.devices(0).reason(), Catch::Matchers::Contains("did not complete"));

  v1::GetStatisticsResponse statistics;
  REQUIRE_OK(stub.GetStatistics(make_context(s).get(), v1::GetStatisticsRequest(), &statistics));
  CHECK(statistics.daemon().devices_lost() == 1);
  CHECK(statistics.session().devices_lost() == 1);

  // on_device_lost logs once, naming the device and the cause.
  CHECK(eventually([&] { return log.text().find("is lost") != std::string::npos; }));
  const std::string text = log.text();
  INFO(text);
  CHECK(text.find("device 0: host 'host' is lost") != std::string::npos);
  CHECK(text.find("did not complete") != std::string::npos);
}

}  // namespace robustness
