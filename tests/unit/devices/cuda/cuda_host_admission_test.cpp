// Host pages admitted to several GPUs (cuda_host_registry.h) on the stand-in driver's
// fake GPUs: one registration per range, shared, undone with the last admission, each
// admission asking its own device address; and every failure naming the memory. The
// [gpu] half is in cuda_two_gpu_test.cpp.
#include <atomic>
#include <thread>
#include <vector>

#include "daemon/devices/cuda/cuda_host_registry.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

#ifdef ACCORD_CUDA_FAKE_DRIVER
namespace accord::devices::cuda {
namespace {

using namespace testing;

std::string address(const HostPages& pages) {
  return std::to_string(reinterpret_cast<std::uintptr_t>(pages.host_address()));
}

TEST_CASE("host pages admitted to two GPUs are registered once and unregistered after the last admission",
          "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(8192);
  const std::string registered = "cuMemHostRegister " + address(pages);
  const std::string unregistered = "cuMemHostUnregister " + address(pages);
  const bool gpu1_first = GENERATE(false, true);
  INFO((gpu1_first ? "GPU 1" : "GPU 0") << " lets go first");

  auto on0 = fake.gpu(0).admit(pages, host_info());
  INFO(on0.status().to_string());
  REQUIRE(on0.ok());
  auto on1 = fake.gpu(1).admit(pages, host_info());
  INFO(on1.status().to_string());
  REQUIRE(on1.ok());
  CHECK(fake.count(registered) == 1);
  CHECK(CudaHostRegistry::process().shares(pages.host_address()) == 2);
  // Each asked in its own context (the fake answers host + ordinal * 2^44).
  const auto host = reinterpret_cast<std::uint64_t>(pages.host_address());
  CHECK(on0.value()->device_address() == host);
  CHECK(on1.value()->device_address() == host + (std::uint64_t{1} << 44));

  (gpu1_first ? on1 : on0).value().reset();
  CHECK(fake.count(unregistered) == 0);
  CHECK(CudaHostRegistry::process().shares(pages.host_address()) == 1);
  (gpu1_first ? on0 : on1).value().reset();
  CHECK(fake.count(unregistered) == 1);
  CHECK(CudaHostRegistry::process().shares(pages.host_address()) == 0);

  // Gone means gone: the next admission registers again.
  auto again = fake.gpu(1).admit(pages, host_info());
  REQUIRE(again.ok());
  CHECK(fake.count(registered) == 2);
}

TEST_CASE("host pages admitted and released from many threads at once stay registered exactly while admitted",
          "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(4096);
  const int threads = GENERATE(2, 4);
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto admission = fake.gpu((t + i) % 2).admit(pages, host_info());
        if (!admission.ok()) ++failures;
      }
    });
  for (std::thread& w : workers) w.join();
  CHECK(failures.load() == 0);
  CHECK(fake.count("cuMemHostRegister " + address(pages)) == fake.count("cuMemHostUnregister " + address(pages)));
  CHECK(fake.count("cuMemHostRegister " + address(pages)) >= 1);
  CHECK(CudaHostRegistry::process().shares(pages.host_address()) == 0);
}

TEST_CASE("a failed host registration names the memory and the GPU", "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(4096);
  fake.control("fail=cuMemHostRegister");
  const auto admitted = fake.gpu(1).admit(pages, host_info());
  REQUIRE_FALSE(admitted.ok());
  const std::string message(admitted.status().message());
  CHECK(message.find("cuMemHostRegister") != std::string::npos);
  CHECK(message.find("registering 4096 bytes of host-mapped memory for gpu:1") != std::string::npos);
  CHECK(CudaHostRegistry::process().shares(pages.host_address()) == 0);
}

TEST_CASE("a failed device-pointer query gives the registration back and names the memory",
          "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(4096);
  fake.control("fail=cuMemHostGetDevicePointer");
  const auto admitted = fake.gpu(0).admit(pages, host_info());
  REQUIRE_FALSE(admitted.ok());
  const std::string message(admitted.status().message());
  CHECK(message.find("cuMemHostGetDevicePointer") != std::string::npos);
  CHECK(message.find("asking the device address of 4096 bytes of host-mapped memory for gpu:0") != std::string::npos);
  CHECK(fake.count("cuMemHostRegister " + address(pages)) == 1);
  CHECK(fake.count("cuMemHostUnregister " + address(pages)) == 1);
}

TEST_CASE("host pages registered by other code of the process are Unsupported, saying so", "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(4096);
  REQUIRE(fake.syms().cuMemHostRegister(pages.host_address(), pages.bytes(), 0) == CUDA_SUCCESS);
  const auto admitted = fake.gpu(0).admit(pages, host_info());
  REQUIRE_FALSE(admitted.ok());
  CHECK(admitted.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(admitted.status().message()) ==
        "cuda: 4096 bytes of host-mapped memory for gpu:0 are already registered by other code of this process");
  CHECK(fake.syms().cuMemHostUnregister(pages.host_address()) == CUDA_SUCCESS);
}

TEST_CASE("one host range cannot be shared with two sizes", "[cuda][admission][fake]") {
  FakeGpus fake;
  HostPages pages(8192);
  struct Prefix final : DeviceMemory {
    explicit Prefix(const HostPages& p) : pages(p) {}
    std::size_t bytes() const noexcept override { return 4096; }
    std::byte* host_address() const noexcept override { return pages.host_address(); }
    int export_fd() const noexcept override { return -1; }
    const HostPages& pages;
  } prefix(pages);
  auto whole = fake.gpu(0).admit(pages, host_info());
  REQUIRE(whole.ok());
  const auto part = fake.gpu(1).admit(prefix, host_info());
  REQUIRE_FALSE(part.ok());
  CHECK(part.status().kind() == ErrorKind::Invalid);
  CHECK(std::string(part.status().message()).find("4096 bytes of host-mapped memory for gpu:1") != std::string::npos);
}

}  // namespace
}  // namespace accord::devices::cuda
#endif  // ACCORD_CUDA_FAKE_DRIVER
