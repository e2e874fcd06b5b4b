// HostDevice through the Device interface: identity, lanes, placements, allocation and
// the load dispatch, plus make_host_device()'s option checks. The kernels, plugins and
// regions behind it have their own files.
#include <sys/utsname.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "accord/builtin_kernels.h"
#include "daemon/devices/host/host_device.h"
#include "daemon/devices/host/host_registration.h"

using namespace accord;
using namespace accord::devices;
using accord::devices::host::HostDevice;
using accord::devices::host::HostDeviceOptions;

TEST_CASE("the host device describes itself as host with the machine's architecture", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  CHECK(device.info().kind == DeviceKind::Host);
  CHECK(device.info().ordinal == 0);
  CHECK(device.info().name == "host");
  utsname name{};
  REQUIRE(::uname(&name) == 0);
  CHECK(device.info().target == name.machine);
  CHECK(device.launches_synchronously());
}

TEST_CASE("the host device has the upload, compute, download and host lanes", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const auto lanes = device.lanes();
  REQUIRE(lanes.size() == 4);
  for (LaneKind lane : {LaneKind::Upload, LaneKind::Compute, LaneKind::Download, LaneKind::Host})
    CHECK(std::find(lanes.begin(), lanes.end(), lane) != lanes.end());
  CHECK(std::find(lanes.begin(), lanes.end(), LaneKind::Npu) == lanes.end());
}

TEST_CASE("the host device holds only HostVisible memory", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  CHECK(device.supports(MemoryPlacement::host_visible()));
  for (MemoryPlacement placement :
       {MemoryPlacement::gpu_local(0), MemoryPlacement::npu_local(0), MemoryPlacement::shared(0)}) {
    CHECK_FALSE(device.supports(placement));
    auto memory = device.allocate({64, placement});
    REQUIRE_FALSE(memory.ok());
    CHECK(memory.status().kind() == ErrorKind::Unsupported);
    CHECK_THAT(std::string(memory.status().message()), Catch::Contains("only HostVisible"));
  }
}

TEST_CASE("host allocations are zeroed, exportable and Invalid at 0 bytes", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto memory = device.allocate({100, MemoryPlacement::host_visible()});
  REQUIRE(memory.ok());
  CHECK((*memory)->bytes() == 100);
  CHECK((*memory)->export_fd() >= 0);
  CHECK((*memory)->host_address()[99] == std::byte{0});

  auto empty = device.allocate({0, MemoryPlacement::host_visible()});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().kind() == ErrorKind::Invalid);
}

TEST_CASE("the host device loads built-ins by name and refuses unknown ones", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const builtin::KernelSpec spec = builtin::add_f32(16);
  auto code = device.load({CodeImage::Kind::Builtin, spec.name, ""}, spec.contract);
  REQUIRE(code.ok());
  CHECK((*code)->name() == "accord.add_f32");
  CHECK((*code)->contract().constants == spec.contract.constants);

  auto unknown = device.load({CodeImage::Kind::Builtin, "accord.conv2d", ""}, spec.contract);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().kind() == ErrorKind::Unsupported);
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("accord.saxpy_f32"));
}

TEST_CASE("make_host_device validates its options", "[devices][host]") {
  auto device = devices::host::make_host_device();
  REQUIRE(device.ok());
  CHECK((*device)->info().name == "host");

  HostDeviceOptions relative;
  relative.plugin_paths = {"libfoo.so"};
  auto refused = devices::host::make_host_device(relative);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("libfoo.so"));
}
