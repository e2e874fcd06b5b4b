// Admission: a device's view of memory whose home is another device. Host-mapped pages
// of another device are admitted and addressable (the host addresses them where they
// are); memory the device cannot reach is Unsupported, naming its home.
#include <cstring>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("a device admits host-mapped memory of another device", "[admission]") {
  HostMappedDouble pages(8192);
  const DeviceInfo home = host_mapped_home(device);
  INFO("admitting host-mapped pages of " << home.name);
  std::unique_ptr<AdmittedMemory> admission = UNWRAP(device.admit(pages, home));
  REQUIRE(admission != nullptr);
  if (device.info().kind == DeviceKind::Host)
    CHECK(admission->device_address() == reinterpret_cast<std::uint64_t>(pages.host_address()));
  else
    CHECK(admission->device_address() != 0);
  admission.reset();  // admissions go before their home memory
}

DEVICE_TEST_CASE("an operation on admitted memory writes the home memory's bytes", "[admission][launch]") {
  HostMappedDouble pages(4096);
  const std::unique_ptr<AdmittedMemory> admission = UNWRAP(device.admit(pages, host_mapped_home(device)));
  const OperationBinding binding = bind_admitted(pages, *admission, Access::Write);
  const Operation op = fill_op(work_lane(device), binding, 0x6B);
  const std::unique_ptr<NativeRegion> region = lower(device, std::span<const Operation>(&op, 1));
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  REQUIRE(sink.done() == 1);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(pages.host_address());
  CHECK(bytes[0] == 0x6B);
  CHECK(bytes[4095] == 0x6B);
}

DEVICE_TEST_CASE("memory the device cannot reach is Unsupported, naming its home", "[admission]") {
  const UnreachableDouble memory;
  const DeviceInfo home = unreachable_home(device);
  INFO("admitting memory of " << home.name << " that has no host address");
  CHECK_STATUS(device.admit(memory, home), FailsWith(ErrorKind::Unsupported, {home.id().to_string()}));
}

}  // namespace
}  // namespace accord::devices::conformance
