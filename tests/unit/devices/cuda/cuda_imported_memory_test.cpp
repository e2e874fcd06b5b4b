// Import of exported GPU memory by fd (cuda_imported_memory.h): on the stand-in driver,
// the entry points in order, the release in reverse order, and every failure naming the
// fd and both GPUs; on a real GPU ([gpu]), an allocation exported and imported by the
// same GPU shows the same bytes through both mappings.
#include <algorithm>

#include "daemon/devices/cuda/cuda_imported_memory.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

#ifdef ACCORD_CUDA_FAKE_DRIVER

struct Exported {
  std::unique_ptr<DeviceMemory> memory;
  int fd = -1;
};

Exported export_from_gpu0(FakeGpus& fake) {
  auto memory = fake.gpu(0).allocate({4096, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  Exported out{std::move(memory).value(), -1};
  out.fd = out.memory->export_fd();
  REQUIRE(out.fd >= 0);
  fake.control("clear");
  return out;
}

TEST_CASE("an imported fd is imported, reserved, mapped and opened to the GPU, then released in reverse order",
          "[cuda][import][fake]") {
  FakeGpus fake;
  const Exported exported = export_from_gpu0(fake);
  const int into = GENERATE(0, 1);  // the same GPU, then its peer
  INFO("imported by gpu:" << into);
  auto imported = CudaImportedMemory::import(fake.gpu(into).context(), exported.fd, exported.memory->bytes(), 0);
  INFO(imported.status().to_string());
  REQUIRE(imported.ok());
  const std::uint64_t address = imported.value()->device_address();
  CHECK(address != 0);
  CHECK(address != exported.memory->device_address());
  CHECK(imported.value()->bytes() == exported.memory->bytes());
  const std::string at = std::to_string(address);
  const std::string bytes = std::to_string(exported.memory->bytes());
  CHECK(fake.count("cuDeviceCanAccessPeer") == (into == 0 ? 0 : 1));
  const int import = fake.position("cuMemImportFromShareableHandle");
  const int reserve = fake.position("cuMemAddressReserve " + at + " " + bytes);
  const int map = fake.position("cuMemMap " + at);
  const int access = fake.position("cuMemSetAccess " + at + " " + bytes + " dev=" + std::to_string(into) + " flags=3");
  CHECK(import >= 0);
  CHECK(import < reserve);
  CHECK(reserve < map);
  CHECK(map < access);

  imported.value().reset();
  const int unmap = fake.position("cuMemUnmap " + at);
  const int free = fake.position("cuMemAddressFree " + at);
  const int release = fake.position("cuMemRelease");
  CHECK(access < unmap);
  CHECK(unmap < free);
  CHECK(free < release);
  CHECK(fake.count("cuMemRelease") == 1);  // the import's handle, not the exporter's
}

TEST_CASE("a failed import step names the fd and both GPUs and releases what it made", "[cuda][import][fake]") {
  FakeGpus fake;
  const Exported exported = export_from_gpu0(fake);
  const std::string call = GENERATE(std::string("cuDeviceGet"), std::string("cuDeviceCanAccessPeer"),
                                    std::string("cuMemImportFromShareableHandle"),
                                    std::string("cuMemGetAllocationPropertiesFromHandle"),
                                    std::string("cuMemAddressReserve"), std::string("cuMemMap"),
                                    std::string("cuMemSetAccess"));
  fake.control("fail=" + call);
  const auto imported = CudaImportedMemory::import(fake.gpu(1).context(), exported.fd, exported.memory->bytes(), 0);
  REQUIRE_FALSE(imported.ok());
  const std::string message(imported.status().message());
  INFO(message);
  CHECK(message.starts_with(call + ": "));
  CHECK(message.find(std::to_string(exported.memory->bytes()) + " bytes of GpuLocal memory of gpu:0 (fd " +
                     std::to_string(exported.fd) + ") for gpu:1") != std::string::npos);
  // Whatever was made is undone: one release per import, one free per reserve, one unmap per map.
  CHECK(fake.count("cuMemRelease") == fake.count("cuMemImportFromShareableHandle"));
  CHECK(fake.count("cuMemAddressFree") == fake.count("cuMemAddressReserve"));
  CHECK(fake.count("cuMemUnmap") == fake.count("cuMemMap"));
}

TEST_CASE("an import without a peer path is Unsupported, naming both GPUs", "[cuda][import][fake]") {
  FakeGpus fake;
  const Exported exported = export_from_gpu0(fake);
  fake.control("peer=0");
  const auto imported = CudaImportedMemory::import(fake.gpu(1).context(), exported.fd, exported.memory->bytes(), 0);
  REQUIRE_FALSE(imported.ok());
  CHECK(imported.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(imported.status().message()) ==
        "gpu:1 cannot reach memory of gpu:0 (fd " + std::to_string(exported.fd) +
            "): the driver reports no peer access between them");
  CHECK(fake.count("cuMemImportFromShareableHandle") == 0);
}

TEST_CASE("an import is Invalid for a bad fd, no bytes, or memory of another GPU than told", "[cuda][import][fake]") {
  FakeGpus fake;
  const Exported exported = export_from_gpu0(fake);
  const CudaContext& gpu1 = fake.gpu(1).context();
  const auto bad_fd = CudaImportedMemory::import(gpu1, -1, 4096, 0);
  REQUIRE_FALSE(bad_fd.ok());
  CHECK(bad_fd.status().kind() == ErrorKind::Invalid);
  CHECK(std::string(bad_fd.status().message()).find("(fd -1) for gpu:1: the fd is not valid") != std::string::npos);
  const auto no_bytes = CudaImportedMemory::import(gpu1, exported.fd, 0, 0);
  REQUIRE_FALSE(no_bytes.ok());
  CHECK(no_bytes.status().kind() == ErrorKind::Invalid);
  // Told it lives on GPU 1 (the importer), but the fd holds GPU 0's memory.
  const auto wrong_home = CudaImportedMemory::import(gpu1, exported.fd, exported.memory->bytes(), 1);
  REQUIRE_FALSE(wrong_home.ok());
  CHECK(wrong_home.status().kind() == ErrorKind::Invalid);
  CHECK(std::string(wrong_home.status().message()).ends_with(": the fd holds memory of gpu:0"));
  CHECK(fake.count("cuMemRelease") == fake.count("cuMemImportFromShareableHandle"));
}

// How a GPU executor meets another GPU's memory: ExecutorServer hands the device a
// DeviceMemory that is only the exported fd; CudaDevice::admit imports it.
TEST_CASE("a device admits another GPU's memory given only as its exported fd by importing it",
          "[cuda][import][fake]") {
  FakeGpus fake;
  const Exported exported = export_from_gpu0(fake);
  struct FdOnly final : DeviceMemory {
    int fd = -1;
    std::size_t size = 0;
    std::size_t bytes() const noexcept override { return size; }
    std::byte* host_address() const noexcept override { return nullptr; }
    int export_fd() const noexcept override { return fd; }
  } fd_only;
  fd_only.fd = exported.fd;
  fd_only.size = exported.memory->bytes();
  auto admitted = fake.gpu(1).admit(fd_only, fake.gpu(0).info());
  INFO(admitted.status().to_string());
  REQUIRE(admitted.ok());
  CHECK(admitted.value()->device_address() != 0);
  CHECK(fake.count("cuMemImportFromShareableHandle") == 1);
  CHECK(fake.position("cuMemSetAccess " + std::to_string(admitted.value()->device_address()) + " " +
                      std::to_string(fd_only.size) + " dev=1 flags=3") >= 0);
  admitted.value().reset();
  CHECK(fake.count("cuMemRelease") == 1);
}

#endif  // ACCORD_CUDA_FAKE_DRIVER

TEST_CASE("an allocation exported and imported on the same GPU shows the same bytes through both mappings",
          "[cuda][gpu][import]") {
  ACCORD_CUDA_TEST_GPU(device);
  auto allocated = device.allocate({1 << 20, MemoryPlacement::gpu_local(0)});
  REQUIRE(allocated.ok());
  const DeviceMemory& memory = *allocated.value();
  const int fd = memory.export_fd();
  if (fd < 0) {
    WARN("skipped: " << device.info().name << " cannot export memory as a POSIX fd");
    return;
  }
  auto imported = CudaImportedMemory::import(device.context(), fd, memory.bytes(), 0);
  INFO(imported.status().to_string());
  REQUIRE(imported.ok());
  const CudaImportedMemory& view = *imported.value();
  CHECK(view.device_address() != memory.device_address());

  // Written through the exporter's mapping, read through the import ...
  const OperationBinding original = bind(memory, Access::Write, 4096, 8192);
  const Operation fill = fill_op(LaneKind::Compute, original, 0xA5);
  RecordingSink sink;
  launch_and_wait(device, *lower(device, std::span<const Operation>(&fill, 1)), sink);
  REQUIRE(sink.done() == 1);
  HostPages pages(memory.bytes());
  auto host = device.admit(pages, host_info());
  REQUIRE(host.ok());
  const std::array copy_bindings{bind_admitted(pages, *host.value(), Access::Write),
                                 bind_admitted(memory, view, Access::Read)};
  const Operation copy = copy_op(LaneKind::Download, copy_bindings);
  launch_and_wait(device, *lower(device, std::span<const Operation>(&copy, 1)), sink);
  INFO(sink.last_error().to_string());
  REQUIRE(sink.done() == 2);
  const auto* p = pages.as<const std::uint8_t>();
  CHECK(std::all_of(p, p + 4096, [](std::uint8_t b) { return b == 0; }));
  CHECK(std::all_of(p + 4096, p + 4096 + 8192, [](std::uint8_t b) { return b == 0xA5; }));
  CHECK(std::all_of(p + 4096 + 8192, p + memory.bytes(), [](std::uint8_t b) { return b == 0; }));

  // ... and written through the import, read through the exporter's mapping.
  const OperationBinding through_import = bind_admitted(memory, view, Access::Write, 100000, 300);
  const Operation fill_import = fill_op(LaneKind::Compute, through_import, 0x3C);
  launch_and_wait(device, *lower(device, std::span<const Operation>(&fill_import, 1)), sink);
  REQUIRE(sink.done() == 3);
  const std::vector<std::uint8_t> back = read_back(device, memory);
  CHECK(back[99999] == 0);
  CHECK(std::all_of(back.begin() + 100000, back.begin() + 100300, [](std::uint8_t b) { return b == 0x3C; }));
  CHECK(back[100300] == 0);
  CHECK(std::all_of(back.begin() + 4096, back.begin() + 4096 + 8192, [](std::uint8_t b) { return b == 0xA5; }));
}

}  // namespace
}  // namespace accord::devices::cuda
