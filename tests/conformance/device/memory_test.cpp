// Memory a device is the home of: allocate agrees with supports(), storage is zeroed
// (also when reused) and at least as large as asked, 0 bytes is refused, and exported
// memory is a descriptor that maps the same bytes. Admission has its own file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

bool all_zero(const std::vector<std::uint8_t>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

DEVICE_TEST_CASE("allocate agrees with supports for every placement", "[memory]") {
  for (MemoryPlacement placement : candidate_placements(device)) {
    INFO("allocating 256 bytes of " << placement.to_string() << " (supports: " << device.supports(placement)
                                    << ")");
    auto memory = device.allocate({256, placement});
    if (device.supports(placement)) {
      REQUIRE_OK(memory);
      CHECK(memory.value()->bytes() >= 256);
    } else {
      CHECK_STATUS(memory, FailsWith(ErrorKind::Unsupported));
      if (!memory.ok()) CHECK_FALSE(memory.status().message().empty());
    }
  }
}

DEVICE_TEST_CASE("allocations are zeroed and at least as large as requested", "[memory]") {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{4097}, std::size_t{1} << 20}) {
    INFO("an allocation of " << bytes << " bytes");
    const std::unique_ptr<DeviceMemory> memory = allocate(device, bytes);
    CHECK(memory->bytes() >= bytes);
    CHECK(all_zero(read_back(device, *memory)));
  }
}

DEVICE_TEST_CASE("memory freed and allocated again reads as zero", "[memory]") {
  // A backend that pools its memory must clear what it hands out again.
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const std::unique_ptr<DeviceMemory> memory = allocate(device, 8192);
    REQUIRE(all_zero(read_back(device, *memory)));
    const OperationBinding binding = bind(*memory, Access::Write);
    const Operation op = fill_op(work_lane(device), binding, 0xA5);
    const std::unique_ptr<NativeRegion> region = lower(device, std::span<const Operation>(&op, 1));
    RecordingSink sink;
    launch_and_wait(device, *region, sink);
    REQUIRE(sink.done() == 1);
    const std::vector<std::uint8_t> filled = read_back(device, *memory);
    // The whole grant (bytes() may exceed the request: GPU memory comes in 2 MiB units).
    REQUIRE(std::count(filled.begin(), filled.end(), std::uint8_t{0xA5}) == static_cast<std::ptrdiff_t>(memory->bytes()));
  }
}

DEVICE_TEST_CASE("an allocation of 0 bytes is refused", "[memory]") {
  // Invalid where the device holds the placement; a device that holds none may say
  // Unsupported first.
  const MemoryPlacement placement = home_placement(device).value_or(MemoryPlacement::host_visible());
  INFO("allocating 0 bytes of " << placement.to_string());
  CHECK_STATUS(device.allocate({0, placement}), FailsWithOneOf({ErrorKind::Invalid, ErrorKind::Unsupported}));
}

DEVICE_TEST_CASE("exported memory is a descriptor that maps the same bytes, or -1", "[memory][export]") {
  const std::unique_ptr<DeviceMemory> memory = allocate(device, 4096);
  const int fd = memory->export_fd();
  if (fd == -1) {
    WARN("device " << device.info().id().to_string() << " does not export its memory (export_fd() == -1)");
    return;
  }
  REQUIRE(fd >= 0);
  REQUIRE(::fcntl(fd, F_GETFD) != -1);
  CHECK(memory->export_fd() == fd);  // borrowed, stable while the memory lives
  if (memory->host_address() == nullptr) return;  // an fd of device memory (a VMM handle)
  struct stat info {};
  REQUIRE(::fstat(fd, &info) == 0);
  CHECK(static_cast<std::size_t>(info.st_size) >= memory->bytes());
  // Another process maps the fd: the same pages, in both directions.
  void* mapped = ::mmap(nullptr, memory->bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* other = static_cast<std::uint8_t*>(mapped);
  std::memset(memory->host_address(), 0x3C, 16);
  CHECK(other[0] == 0x3C);
  CHECK(other[15] == 0x3C);
  other[100] = 0x7E;
  CHECK(std::to_integer<std::uint8_t>(memory->host_address()[100]) == 0x7E);
  ::munmap(mapped, memory->bytes());
}

}  // namespace
}  // namespace accord::devices::conformance
