// GPU memory of the CUDA backend (ARCHITECTURE.md, devices: cuda). CudaMemory is
// GpuLocal storage made with the VMM API (cuMemCreate, exportable as a POSIX fd, mapped
// with cuMemAddressReserve/cuMemMap/cuMemSetAccess), sized in allocation-granularity
// units (2 MiB on an H200) and zeroed before it is handed out. CudaHostAdmission is a
// GPU's view of host pages (HostVisible memfd pages, an NPU's Shared pages) registered
// with cuMemHostRegister.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "client/api/unique_fd.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

// What the device fixes once for all its allocations.
struct CudaMemoryConfig {
  std::size_t granularity = 2u << 20;  // cuMemGetAllocationGranularity (minimum)
  bool exportable = true;  // POSIX fd handles requested (the device supports them)
  CUstream zero_stream = nullptr;  // a non-blocking stream of the device for zeroing
};

class CudaMemory final : public DeviceMemory {
 public:
  // `bytes` (> 0) rounded up to `config.granularity`, zeroed (cuMemsetD8Async on the
  // zeroing stream, then that stream is synchronised: it waits for nothing else).
  // Blocks. Thread-safe. Errors: Busy when the GPU is out of memory; Invalid when the
  // rounded size overflows; the mapped kind of any other driver failure, naming the call.
  static Result<std::unique_ptr<CudaMemory>> create(const CudaContext& context, std::size_t bytes,
                                                    const CudaMemoryConfig& config);

  // Unmaps, frees the address range and releases the physical memory. A process that
  // imported the exported fd keeps the memory (VMM handles are reference counted).
  ~CudaMemory() override = default;

  // The granted size: a multiple of the granularity, at least what was asked.
  std::size_t bytes() const noexcept override { return mapping_.bytes(); }
  // Not host mapped.
  std::byte* host_address() const noexcept override { return nullptr; }
  // The CUdeviceptr of the first byte.
  std::uint64_t device_address() const noexcept override { return mapping_.get(); }
  // The POSIX fd of the physical allocation (cuMemExportToShareableHandle), exported on
  // the first call and owned by *this; -1 when the device cannot export or the export
  // failed. Borrowed: valid while *this lives. Thread-safe.
  int export_fd() const noexcept override;

 private:
  CudaMemory(const CudaContext& context, bool exportable) noexcept : context_(context), exportable_(exportable) {}

  CudaContext context_;
  bool exportable_;
  // Declaration order is release order reversed: unmap, free the range, release.
  UniqueCuMemHandle handle_;
  UniqueCuAddressRange range_;
  UniqueCuMapping mapping_;
  mutable std::mutex export_mu_;
  mutable bool export_tried_ = false;
  mutable UniqueFd export_fd_;
};

class CudaHostAdmission final : public AdmittedMemory {
 public:
  // Registers the host pages of `memory` (which must have a host address) with the GPU
  // (CU_MEMHOSTREGISTER_DEVICEMAP | PORTABLE) and takes their device pointer
  // (cuMemHostGetDevicePointer). Blocks (pinning). Thread-safe. Errors: Unsupported when
  // the pages are already registered (another GPU admitted them: two-GPU issue), the
  // mapped kind of any other driver failure.
  static Result<std::unique_ptr<CudaHostAdmission>> create(const CudaContext& context, const DeviceMemory& memory);

  // Unregisters the pages; runs before the home memory unmaps them (device.h).
  ~CudaHostAdmission() override = default;

  std::uint64_t device_address() const noexcept override { return device_address_; }

 private:
  CudaHostAdmission() = default;
  UniqueCuHostRegistration registration_;
  std::uint64_t device_address_ = 0;
};

}  // namespace accord::devices::cuda
