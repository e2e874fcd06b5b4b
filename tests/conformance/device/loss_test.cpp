// Device loss: a device reports loss to the listener attached to it (the registry) only
// when it is lost, once. Normal work never reports it; a backend whose device a fault
// kernel can make lost shows that it does; one that cannot declares the gap.
#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("normal work never reports the device lost", "[loss]") {
  RecordingListener listener;
  device.attach(listener);  // before any other call, as the registry does
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> region = simple_region(device, scratch);
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  launch_and_wait(device, *region, sink);
  CHECK(sink.done() == 2);
  device.shut_down();
  CHECK(listener.calls() == 0);
}

DEVICE_TEST_CASE("a fault makes the device lost and tells its listener once", "[loss]") {
  RecordingListener listener;
  device.attach(listener);
  const std::unique_ptr<LoadedCode> fault =
      load(device, device_backend().code.fault, "fault", one_binding_contract());
  const auto victim = allocate(device, 64);
  const OperationBinding binding = bind(*victim, Access::ReadWrite);
  const Operation op = kernel_op(work_lane(device), *fault, std::span<const OperationBinding>(&binding, 1));
  const std::unique_ptr<NativeRegion> region = lower(device, std::span<const Operation>(&op, 1));
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  CHECK(sink.errors() == 1);
  CHECK_STATUS(sink.last_error(), FailsWithOneOf({ErrorKind::DeviceLost, ErrorKind::Execution}));
  INFO("waiting " << kCompletionLimit.count() << " s for the device to report its loss");
  REQUIRE(listener.wait_for(1));
  device.shut_down();  // no report can follow, so the counts below are final
  CHECK(listener.calls() == 1);
  CHECK_FALSE(listener.first_cause().ok());
  CHECK(sink.calls() == 1);
}

}  // namespace
}  // namespace accord::devices::conformance
