// Native waits: a device that says waits_natively() honours RegionWaits, so a region
// launched while its same-device predecessor still runs does not start before it ends.
// A device that does not wait natively declares this test a gap.
#include <array>
#include <cstring>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("a launch waits natively for a running predecessor", "[launch][waits]") {
  INFO("device " << device.info().id().to_string() << " does not wait natively: list this test as a gap "
                 << "with the reason 'does not wait natively'");
  REQUIRE(device.waits_natively());
  // The predecessor sleeps, then writes the marker; the successor copies the marker out.
  // Had it not waited, it would copy the zeroes that were there before.
  constexpr std::uint32_t kSleepUs = 100'000;
  const std::unique_ptr<LoadedCode> sleeper =
      load(device, device_backend().code.sleep_us, "sleep_us", sleep_contract(kSleepUs));
  const auto marker = allocate(device, 64);
  const auto out = allocate(device, 64);
  const OperationBinding sleep_binding = bind(*marker, Access::ReadWrite, 0, 4);
  const Operation sleep = kernel_op(work_lane(device), *sleeper, std::span<const OperationBinding>(&sleep_binding, 1));
  const std::array copy_bindings{bind(*out, Access::Write, 0, 4), bind(*marker, Access::Read, 0, 4)};
  const LaneKind copy_lane = has_lane(device, LaneKind::Download) ? LaneKind::Download : work_lane(device);
  const Operation copy = copy_op(copy_lane, copy_bindings);
  const std::unique_ptr<NativeRegion> predecessor = lower(device, std::span<const Operation>(&sleep, 1));
  const std::unique_ptr<NativeRegion> successor = lower(device, std::span<const Operation>(&copy, 1));

  RecordingSink first;
  RecordingSink second;
  const std::array waits{RegionWait{predecessor.get(), 0}};
  device.launch(*predecessor, RegionWaits{0, {}}, first);
  device.launch(*successor, RegionWaits{0, waits}, second);
  REQUIRE(first.wait_for(1));
  REQUIRE(second.wait_for(1));
  CHECK(first.done() == 1);
  CHECK(second.done() == 1);
  CHECK(first.last_order() < second.last_order());
  const std::vector<std::uint8_t> copied = read_back(device, *out);
  std::uint32_t value = 0;
  std::memcpy(&value, copied.data(), sizeof(value));
  CHECK(value == kSleepMarker);
}

}  // namespace
}  // namespace accord::devices::conformance
