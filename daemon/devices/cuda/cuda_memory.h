// GPU memory of the CUDA backend (ARCHITECTURE.md, devices: cuda). CudaMemory is
// GpuLocal storage made with the VMM API (cuMemCreate, exportable as a POSIX fd, mapped
// with cuMemAddressReserve/cuMemMap/cuMemSetAccess), sized in allocation-granularity
// units (2 MiB on an H200) and zeroed before it is handed out; other GPUs of the process
// reach it through CudaPeerAdmission (cuda_peer_admission.h). CudaHostAdmission is a
// GPU's view of host pages (HostVisible memfd pages, an NPU's Shared pages) registered
// with cuMemHostRegister, one registration shared by every GPU (cuda_host_registry.h).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "client/api/unique_fd.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_host_registry.h"
#include "daemon/devices/cuda/cuda_peer_access.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

// What the device fixes once for all its allocations.
struct CudaMemoryConfig {
  std::size_t granularity = 2u << 20;  // cuMemGetAllocationGranularity (minimum)
  bool exportable = true;  // POSIX fd handles requested (the device supports them)
  CUstream zero_stream = nullptr;  // a non-blocking stream of the device for zeroing
};

// Thread-safe: every member (export_fd() takes a mutex; the rest is immutable).
class CudaMemory final : public DeviceMemory {
 public:
  // `bytes` (> 0) rounded up to `config.granularity`, zeroed (cuMemsetD8Async on the
  // zeroing stream, then that stream is synchronised: it waits for nothing else).
  // Blocks. Thread-safe. Errors: Busy when the GPU is out of memory; Invalid when the
  // rounded size overflows; the mapped kind of any other driver failure, naming the call.
  static Result<std::unique_ptr<CudaMemory>> create(const CudaContext& context, std::size_t bytes,
                                                    const CudaMemoryConfig& config);

  // Unmaps, frees the address range and releases the physical memory. A process that
  // imported the exported fd keeps the memory (VMM handles are reference counted). Peer
  // admissions still alive (the engine destroys them first) no longer touch the range.
  ~CudaMemory() override;

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

  // The GPU the memory lives on: the borrowed view of its device's context.
  const CudaContext& context() const noexcept { return context_; }
  // The grants of this memory to other GPUs, shared with their CudaPeerAdmissions.
  std::shared_ptr<CudaPeerAccess> peer_access() const noexcept { return peers_; }

 private:
  CudaMemory(const CudaContext& context, bool exportable) noexcept : context_(context), exportable_(exportable) {}

  CudaContext context_;
  bool exportable_;
  // Declaration order is release order reversed: unmap, free the range, release.
  UniqueCuMemHandle handle_;
  UniqueCuAddressRange range_;
  UniqueCuMapping mapping_;
  std::shared_ptr<CudaPeerAccess> peers_;  // retired by the destructor, before unmapping
  mutable std::mutex export_mu_;
  mutable bool export_tried_ = false;
  mutable UniqueFd export_fd_;
};

// Immutable once made: every member is thread-safe.
class CudaHostAdmission final : public AdmittedMemory {
 public:
  // Takes a share of the process's registration of the host pages of `memory` (which
  // must have a host address), registering them (CU_MEMHOSTREGISTER_DEVICEMAP |
  // PORTABLE) when no other GPU has, and asks their device pointer in `context`
  // (cuMemHostGetDevicePointer). Blocks (pinning). Thread-safe. Errors: Internal when
  // the memory is not host mapped; CudaHostRegistry::pin's; the mapped kind of a
  // cuMemHostGetDevicePointer failure.
  static Result<std::unique_ptr<CudaHostAdmission>> create(const CudaContext& context, const DeviceMemory& memory);

  // Drops the share: the last admission of the pages unregisters them, before the home
  // memory unmaps them (device.h).
  ~CudaHostAdmission() override = default;

  std::uint64_t device_address() const noexcept override { return device_address_; }

 private:
  CudaHostAdmission() = default;
  CudaHostPin pin_;
  std::uint64_t device_address_ = 0;
};

}  // namespace accord::devices::cuda
