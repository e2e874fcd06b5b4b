// Teardown: shut_down() stops every report, may be called again without harm, and is
// followed by the engine's order of release (regions, then memory, then the device),
// even when a region was still in flight.
#include <thread>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("shut_down may be called twice, and no sink is called after it", "[shutdown]") {
  // An asynchronous device gets a region that is still running at shut_down where the
  // backend has a sleeping kernel; a synchronous one has finished it by then.
  constexpr std::uint32_t kSleepUs = 50'000;
  std::unique_ptr<LoadedCode> sleeper;
  std::unique_ptr<DeviceMemory> memory;
  std::unique_ptr<NativeRegion> region;
  const bool in_flight = !device.launches_synchronously() && device_backend().code.sleep_us.has_value();
  if (in_flight) {
    sleeper = load(device, device_backend().code.sleep_us, "sleep_us", sleep_contract(kSleepUs));
    memory = allocate(device, 64);
    const OperationBinding binding = bind(*memory, Access::ReadWrite, 0, 4);
    const Operation op = kernel_op(work_lane(device), *sleeper, std::span<const OperationBinding>(&binding, 1));
    region = lower(device, std::span<const Operation>(&op, 1));
  } else {
    region = simple_region(device, memory);
  }
  RecordingSink sink;
  device.launch(*region, RegionWaits{0, {}}, sink);
  device.shut_down();
  const int at_return = sink.calls();
  device.shut_down();
  CHECK(at_return <= 1);
  if (device.launches_synchronously()) CHECK(at_return == 1);
  // Long enough for an abandoned region to have finished, had it not been abandoned.
  if (!device.launches_synchronously()) std::this_thread::sleep_for(std::chrono::microseconds(3 * kSleepUs));
  CHECK(sink.calls() == at_return);
  // The engine's order after shut_down: native regions, then memory and code.
  region.reset();
  memory.reset();
  sleeper.reset();
}

}  // namespace
}  // namespace accord::devices::conformance
