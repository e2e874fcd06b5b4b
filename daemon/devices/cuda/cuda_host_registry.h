// Host pages registered with the CUDA driver once per process, shared by every GPU that
// admits them. cuMemHostRegister(PORTABLE) pins a range for all contexts of the
// process, and a second registration of the same range fails with
// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, so host memory admitted to GPU 0 and GPU 1
// takes one registration here, counted, and unregisters with its last admission.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_handles.h"

namespace accord::devices::cuda {

class CudaHostRegistry;

// One admission's share of a registration: move-only; destroying it releases the share
// (the last share unregisters the pages). Not thread-safe: one owner.
class CudaHostPin {
 public:
  CudaHostPin() noexcept = default;
  ~CudaHostPin() { reset(); }
  CudaHostPin(const CudaHostPin&) = delete;
  CudaHostPin& operator=(const CudaHostPin&) = delete;
  CudaHostPin(CudaHostPin&& other) noexcept;
  CudaHostPin& operator=(CudaHostPin&& other) noexcept;

  explicit operator bool() const noexcept { return registry_ != nullptr; }
  void reset() noexcept;

 private:
  friend class CudaHostRegistry;
  CudaHostPin(CudaHostRegistry& registry, const CudaContext& context, std::byte* pages) noexcept
      : registry_(&registry), context_(context), pages_(pages) {}

  CudaHostRegistry* registry_ = nullptr;
  CudaContext context_;  // the admitting GPU: alive while its admission is (device.h)
  std::byte* pages_ = nullptr;
};

// The registrations of one process. Thread-safe: every member takes one mutex, held
// across the driver's register and unregister calls so that a range is never
// registered while its last share is still unregistering it.
class CudaHostRegistry {
 public:
  // The process's registry: one driver, one set of registrations. Never destroyed, so
  // a pin released during static destruction still finds it.
  static CudaHostRegistry& process();

  // A share of the registration of [pages, pages + bytes) for `context`'s GPU,
  // registering it (DEVICEMAP | PORTABLE, with `context` current) when it is the first.
  // `what` names the memory in errors. Blocks (pinning). Errors: Invalid when the range
  // is registered here with another size; Unsupported when the driver reports it
  // registered by other code of the process; the mapped kind of any other failure.
  Result<CudaHostPin> pin(const CudaContext& context, std::byte* pages, std::size_t bytes, const std::string& what);

  // Shares held now on the range starting at `pages` (0 when it is not registered here).
  std::uint32_t shares(const std::byte* pages) const;

 private:
  friend class CudaHostPin;
  CudaHostRegistry() = default;
  // Drops one share; the last one unregisters in `context` (see the .cpp for why).
  void unpin(const CudaContext& context, std::byte* pages) noexcept;

  struct Entry {
    std::byte* pages = nullptr;
    std::size_t bytes = 0;
    std::uint32_t shares = 0;
    UniqueCuHostRegistration registration;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // few at a time: one per host allocation admitted to a GPU
};

}  // namespace accord::devices::cuda
