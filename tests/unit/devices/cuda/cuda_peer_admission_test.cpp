// Another GPU's memory admitted by peer access (cuda_peer_admission.h, cuda_peer_access.h)
// on the stand-in driver's fake GPUs: one grant per GPU however many admissions share it,
// revoked by the last, the home's own address, refusals naming both GPUs, and an
// admission outliving its memory leaving the range alone. The [gpu] copy is in
// cuda_two_gpu_test.cpp.
#include "daemon/devices/cuda/cuda_memory.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

#ifdef ACCORD_CUDA_FAKE_DRIVER
namespace accord::devices::cuda {
namespace {

using namespace testing;

std::unique_ptr<DeviceMemory> gpu0_memory(FakeGpus& fake) {
  auto memory = fake.gpu(0).allocate({4096, MemoryPlacement::gpu_local(0)});
  INFO(memory.status().to_string());
  REQUIRE(memory.ok());
  return std::move(memory).value();
}

// The log line of a cuMemSetAccess on all of `memory` for GPU `ordinal`.
std::string access_line(const DeviceMemory& memory, int ordinal, CUmemAccess_flags flags) {
  return "cuMemSetAccess " + std::to_string(memory.device_address()) + " " + std::to_string(memory.bytes()) +
         " dev=" + std::to_string(ordinal) + " flags=" + std::to_string(flags);
}

TEST_CASE("memory of another GPU is admitted by one grant at the home's address, revoked by the last admission",
          "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  const auto memory = gpu0_memory(fake);
  fake.control("clear");
  auto first = fake.gpu(1).admit(*memory, fake.gpu(0).info());
  INFO(first.status().to_string());
  REQUIRE(first.ok());
  auto second = fake.gpu(1).admit(*memory, fake.gpu(0).info());  // e.g. a restarted GPU 1's view
  REQUIRE(second.ok());
  CHECK(first.value()->device_address() == memory->device_address());
  CHECK(second.value()->device_address() == memory->device_address());
  CHECK(fake.count("cuDeviceCanAccessPeer 1 0") == 2);
  CHECK(fake.count(access_line(*memory, 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)) == 1);
  const auto& cuda_memory = dynamic_cast<const CudaMemory&>(*memory);
  CHECK(cuda_memory.peer_access()->users(1) == 2);

  first.value().reset();
  CHECK(fake.count(access_line(*memory, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE)) == 0);
  second.value().reset();
  CHECK(fake.count(access_line(*memory, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE)) == 1);
  CHECK(cuda_memory.peer_access()->users(1) == 0);
  CHECK(fake.count("cuMemSetAccess " + std::to_string(memory->device_address()) + " " +
                   std::to_string(memory->bytes()) + " dev=0") == 0);  // the home's own access is never touched
}

TEST_CASE("a GPU's own memory admitted to it is its address, with nothing granted", "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  const auto memory = gpu0_memory(fake);
  fake.control("clear");
  auto own = fake.gpu(0).admit(*memory, fake.gpu(0).info());
  REQUIRE(own.ok());
  CHECK(own.value()->device_address() == memory->device_address());
  own.value().reset();
  CHECK(fake.log().empty());
}

TEST_CASE("peer admission is Unsupported when the driver reports no peer path, naming both GPUs",
          "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  const auto memory = gpu0_memory(fake);
  fake.control("clear");
  fake.control("peer=0");
  const auto refused = fake.gpu(1).admit(*memory, fake.gpu(0).info());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(refused.status().message()) ==
        "cuda:1 (Fake GPU 1) cannot reach memory of gpu:0 (cuda:0 (Fake GPU 0)): the driver reports no peer access "
        "between them");
  CHECK(fake.count("cuMemSetAccess") == 0);
}

TEST_CASE("a failed peer query or grant names both GPUs and grants nothing", "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  const auto memory = gpu0_memory(fake);
  const std::string call = GENERATE(std::string("cuDeviceCanAccessPeer"), std::string("cuMemSetAccess"));
  fake.control("fail=" + call);
  const auto failed = fake.gpu(1).admit(*memory, fake.gpu(0).info());
  REQUIRE_FALSE(failed.ok());
  const std::string message(failed.status().message());
  INFO(message);
  CHECK(message.starts_with(call + ": "));
  CHECK(message.find("cuda:1 (Fake GPU 1) and memory of gpu:0 (cuda:0 (Fake GPU 0))") != std::string::npos);
  CHECK(dynamic_cast<const CudaMemory&>(*memory).peer_access()->users(1) == 0);
  fake.control("fail=");
  auto later = fake.gpu(1).admit(*memory, fake.gpu(0).info());
  CHECK(later.ok());
}

TEST_CASE("a peer admission that outlives its memory leaves the freed range alone", "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  auto memory = gpu0_memory(fake);
  auto admission = fake.gpu(1).admit(*memory, fake.gpu(0).info());
  REQUIRE(admission.ok());
  memory.reset();
  fake.control("clear");
  admission.value().reset();
  CHECK(fake.count("cuMemSetAccess") == 0);
}

TEST_CASE("memory of a GPU that is no CUDA device of this process is Unsupported, naming its home",
          "[cuda][admission][peer][fake]") {
  FakeGpus fake;
  struct OtherGpuMemory final : DeviceMemory {
    std::size_t bytes() const noexcept override { return 4096; }
    std::byte* host_address() const noexcept override { return nullptr; }
    std::uint64_t device_address() const noexcept override { return 0x7f0000000000ull; }
    int export_fd() const noexcept override { return -1; }
  } other;
  DeviceInfo home;
  home.kind = DeviceKind::Gpu;
  home.ordinal = 3;
  home.backend = "cuda";
  home.name = "cuda:3 (elsewhere)";
  const auto refused = fake.gpu(0).admit(other, home);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(refused.status().message()) ==
        "cuda:0 (Fake GPU 0) cannot reach memory of gpu:3 (cuda:3 (elsewhere)): it is neither host mapped, nor CUDA "
        "memory of this process, nor exported");
}

}  // namespace
}  // namespace accord::devices::cuda
#endif  // ACCORD_CUDA_FAKE_DRIVER
