// Shared helpers of the CUDA backend's unit tests: opening GPU 0 or skipping with the
// reason, the nvcc-built test kernels, host pages standing for HostVisible memory, a
// recording sink and listener, and short ways to bind, lower, launch and read back.
// Skips follow the suites' convention: Catch2 v2 has no SKIP, so a test that cannot run
// here WARNs a line starting "skipped:" and returns.
#pragma once

#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "daemon/devices/cuda/cuda_device.h"
#include "tests/support/device_operations.h"

namespace accord::devices::cuda::testing {

// GPU 0 through the real driver (with `options`), or the reason there is none here.
Result<std::unique_ptr<CudaDevice>> open_gpu(const CudaDeviceOptions& options = {});
// Every GPU of the real driver, opened over one symbol table (as the factory does), or
// the reason there is none here.
Result<std::vector<std::unique_ptr<CudaDevice>>> open_gpus();

// The bytes of a kernel file built by nvcc ("kernels.ptx", "kernels_sm80.cubin", ...),
// or nullopt when nvcc was not found at build time.
std::optional<std::vector<std::byte>> kernel_file(const std::string& name);

// A GPU image of `file` with kernel `name` and launch shape (1 block of `threads`).
CodeImage gpu_image(std::vector<std::byte> bytes, std::string name, std::uint32_t threads = 1);

// Host-mapped memory whose home is the host: anonymous pages, zeroed, page-rounded.
class HostPages final : public DeviceMemory {
 public:
  explicit HostPages(std::size_t bytes);
  ~HostPages() override;
  HostPages(const HostPages&) = delete;
  HostPages& operator=(const HostPages&) = delete;
  std::size_t bytes() const noexcept override { return bytes_; }
  std::byte* host_address() const noexcept override { return address_; }
  int export_fd() const noexcept override { return -1; }
  template <class T>
  T* as() const noexcept { return reinterpret_cast<T*>(address_); }

 private:
  std::byte* address_ = nullptr;
  std::size_t bytes_ = 0;
};

// The host as a DeviceInfo, the home of HostPages.
DeviceInfo host_info();

class RecordingSink final : public CompletionSink {
 public:
  void on_done() noexcept override { record(0, Status()); }
  void on_error(Status status) noexcept override { record(1, std::move(status)); }
  void on_cancelled() noexcept override { record(2, Status()); }
  // Waits up to 10 s for `calls` reports.
  bool wait_for(int calls);
  int calls();
  int done();
  int errors();
  Status last_error();
  std::thread::id last_thread();
  std::uint64_t last_order();

 private:
  void record(int outcome, Status status) noexcept;
  std::mutex mu_;
  std::condition_variable changed_;
  int counts_[3] = {0, 0, 0};
  Status error_;
  std::thread::id thread_;
  std::uint64_t order_ = 0;
};

class RecordingListener final : public DeviceListener {
 public:
  void on_device_lost(Status cause) noexcept override;
  bool wait_for(int calls);
  int calls();
  Status first_cause();

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int calls_ = 0;
  Status cause_;
};

// A binding of [offset, offset + length) of `memory` on its home GPU.
OperationBinding bind(const DeviceMemory& memory, Access access, std::size_t offset = 0,
                      std::size_t length = static_cast<std::size_t>(-1));
// A binding of host pages admitted to the GPU.
OperationBinding bind_admitted(const DeviceMemory& memory, const AdmittedMemory& admission, Access access,
                               std::size_t offset = 0, std::size_t length = static_cast<std::size_t>(-1));

using accord::devices::testing::copy_op;  // tests/support/device_operations.h
using accord::devices::testing::fill_op;
using accord::devices::testing::kernel_op;

// lower() that REQUIREs success.
std::unique_ptr<NativeRegion> lower(Device& device, std::span<const Operation> ops,
                                    std::span<const OperationEdge> edges = {}, std::uint32_t slots = 1);
// Launches in `slot` and REQUIREs one report within 10 s.
void launch_and_wait(Device& device, NativeRegion& region, RecordingSink& sink, std::uint32_t slot = 0);
// The bytes of GPU memory, copied into admitted host pages on the Download lane.
std::vector<std::uint8_t> read_back(CudaDevice& device, const DeviceMemory& memory);
// True, with a warning that says so, when `writer` is EarlyKernel and `device` is older
// than sm_90, where no early flag kernel exists (its probe settles on Kernel): the caller
// returns, since what it tests is not there.
bool early_kernel_unavailable(const CudaDevice& device, CudaFlagWriter writer);

}  // namespace accord::devices::cuda::testing

// Opens GPU 0 into `var` (a CudaDevice&) or skips the test with the reason.
#define ACCORD_CUDA_TEST_GPU(var) ACCORD_CUDA_TEST_GPU_WITH(var, ::accord::devices::cuda::CudaDeviceOptions{})

// The same, with the device options `options`.
#define ACCORD_CUDA_TEST_GPU_WITH(var, options)                                            \
  auto var##_opened_ = ::accord::devices::cuda::testing::open_gpu(options);                \
  if (!var##_opened_.ok()) {                                                               \
    WARN("skipped: no CUDA GPU here: " << var##_opened_.status().message());               \
    return;                                                                                \
  }                                                                                        \
  ::accord::devices::cuda::CudaDevice& var = *var##_opened_.value()

// Reads kernel file `name` into `var` (std::vector<std::byte>) or skips.
#define ACCORD_CUDA_TEST_KERNELS(var, name)                                                \
  auto var##_file_ = ::accord::devices::cuda::testing::kernel_file(name);                  \
  if (!var##_file_) {                                                                      \
    WARN("skipped: test kernel file " << name << " was not built (nvcc not found at build time)"); \
    return;                                                                                \
  }                                                                                        \
  std::vector<std::byte> var = std::move(*var##_file_)

#define ACCORD_CUDA_REQUIRE_OK(...) REQUIRE((__VA_ARGS__).ok())
