// Identity and query: what a device says about itself (DeviceInfo, lanes, placements it
// is home of, its launch style) is complete, consistent and safe to ask from any thread.
// Memory, code and launches have their own files.
#include <set>
#include <thread>
#include <vector>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("a device names its kind, ordinal, backend and target", "[identity]") {
  const DeviceInfo& info = device.info();
  CHECK(info.backend == device_backend().name);
  CHECK_FALSE(info.name.empty());
  CHECK_FALSE(info.target.empty());
  CHECK(info.ordinal >= 0);
  if (info.kind == DeviceKind::Host) CHECK(info.ordinal == 0);
  CHECK(info.id() == DeviceId{info.kind, info.ordinal});
  const std::string expected =
      info.kind == DeviceKind::Host ? "host" : std::string(to_string(info.kind)) + ":" + std::to_string(info.ordinal);
  CHECK(info.id().to_string() == expected);
}

DEVICE_TEST_CASE("a device offers at least one lane, each once", "[identity]") {
  const auto lanes = device.lanes();
  REQUIRE_FALSE(lanes.empty());
  const std::set<LaneKind> unique(lanes.begin(), lanes.end());
  CHECK(unique.size() == lanes.size());
}

DEVICE_TEST_CASE("a device is the home only of placements that name it", "[identity][memory]") {
  for (MemoryPlacement placement : candidate_placements(device)) {
    INFO(placement.to_string() << " has home " << placement.home().to_string() << "; the device is "
                               << device.info().id().to_string());
    if (device.supports(placement)) CHECK(placement.home() == device.info().id());
  }
}

DEVICE_TEST_CASE("identity queries give the same answers from several threads", "[identity][threads]") {
  const DeviceInfo expected = device.info();
  const std::vector<LaneKind> lanes(device.lanes().begin(), device.lanes().end());
  const bool synchronous = device.launches_synchronously();
  const bool native = device.waits_natively();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const DeviceInfo& info = device.info();
        const bool same = info.name == expected.name && info.id() == expected.id() &&
                          std::equal(lanes.begin(), lanes.end(), device.lanes().begin(), device.lanes().end()) &&
                          device.launches_synchronously() == synchronous && device.waits_natively() == native &&
                          device.supports(MemoryPlacement::host_visible()) ==
                              device.supports(MemoryPlacement::host_visible());
        if (!same) mismatches.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches.load() == 0);
}

}  // namespace
}  // namespace accord::devices::conformance
