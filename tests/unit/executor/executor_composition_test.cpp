// The composition root with GPU executors: the backend named by gpu_executor_backend is
// opened through one executor per GPU (here the fake backend, which lives only in
// fake_gpu_executor), and a backend that fails in the executor is absent with its reason.
#include <algorithm>
#include <vector>

#include "daemon/devices/composition/open_devices.h"
#include "daemon/executor/open_gpu_executors.h"
#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {

TEST_CASE("the composition root opens every fake GPU through its own executor", "[executor][composition]") {
  devices::DeviceSettings settings = fake_executor_settings();
  settings.options["fake.devices"] = "3";
  auto registry = devices::open_devices(settings);
  INFO(registry.status().to_string());
  REQUIRE(registry.ok());
  REQUIRE(registry->size() == 4);
  CHECK(registry->at(0).info().kind == DeviceKind::Host);
  for (int i = 1; i <= 3; ++i) {
    const devices::DeviceInfo& info = registry->at(static_cast<std::size_t>(i)).info();
    CHECK(info.backend == "fake");
    CHECK(info.id() == DeviceId{DeviceKind::Gpu, i - 1});
    auto* executor = dynamic_cast<executor::ExecutorDevice*>(&registry->at(static_cast<std::size_t>(i)));
    REQUIRE(executor != nullptr);
    CHECK(executor->executor_pid() > 0);
  }
  CHECK(registry->find_for(MemoryPlacement::gpu_local(2)) == 3);
}

TEST_CASE("a backend that fails in its executor is absent with its own reason", "[executor][composition]") {
  devices::DeviceSettings settings = fake_executor_settings();
  settings.options["fake.fail"] = "fake: no driver: libfake.so.1 not found";
  auto registry = devices::open_devices(settings);
  REQUIRE(registry.ok());
  CHECK(registry->size() == 1);
  REQUIRE(registry->absent().size() >= 1);
  bool found = false;
  for (const devices::AbsentBackend& absent : registry->absent())
    if (absent.backend == "fake") {
      found = true;
      CHECK(absent.reason == "fake: no driver: libfake.so.1 not found");
    }
  CHECK(found);
}

TEST_CASE("without a factory the executor settings are ignored and the backend opens in process",
          "[executor][composition]") {
  devices::DeviceSettings settings = fake_executor_settings();
  settings.gpu_executor_factory = nullptr;
  settings.gpu_executor_backend = "null";
  settings.backends = {"host", "null"};
  auto registry = devices::open_devices(settings);
  REQUIRE(registry.ok());
  for (std::size_t i = 0; i < registry->size(); ++i)
    CHECK(dynamic_cast<executor::ExecutorDevice*>(&registry->at(i)) == nullptr);
}


TEST_CASE("an isolation group gets executors of its own for every GPU", "[executor][composition][isolation]") {
  devices::DeviceSettings settings = fake_executor_settings();
  settings.options["fake.devices"] = "2";
  settings.isolation_groups = {"uid:1001"};
  auto registry = devices::open_devices(settings);
  INFO(registry.status().to_string());
  REQUIRE(registry.ok());
  REQUIRE(registry->size() == 5);  // host, the shared gpu:0 and gpu:1, then uid:1001's
  std::vector<pid_t> pids;
  for (std::size_t i = 1; i < 5; ++i) {
    auto* executor = dynamic_cast<executor::ExecutorDevice*>(&registry->at(i));
    REQUIRE(executor != nullptr);
    pids.push_back(executor->executor_pid());
    CHECK(registry->isolation(i) == (i <= 2 ? "" : "uid:1001"));
  }
  std::sort(pids.begin(), pids.end());
  CHECK(std::unique(pids.begin(), pids.end()) == pids.end());  // four processes
  CHECK(registry->find(DeviceId::gpu(1)) == 2);
  CHECK(registry->find(DeviceId::gpu(1), "uid:1001") == 4);
  CHECK(registry->find(DeviceId::gpu(0), "uid:1002") == 1);
}

}  // namespace accord::testing
