// GPU memory of another process, imported from the POSIX fd its owner exported
// (CudaMemory::export_fd, cuMemExportToShareableHandle) and mapped for this GPU. This is
// how a GPU executor (ARCHITECTURE.md, devices: GPU executors) will reach an allocation
// that another executor's GPU, or its own GPU in another process, is the home of. The
// fd may also come from this very process: then the memory has a second mapping here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

// Immutable once made: every member is thread-safe.
class CudaImportedMemory final : public AdmittedMemory {
 public:
  // Imports `fd` (borrowed: the caller still closes it) holding `bytes` (> 0, the
  // exporter's granted size, a multiple of the granularity) of VMM memory that lives on
  // GPU `home_ordinal`, and maps all of it read-write for `context`'s GPU:
  // cuMemImportFromShareableHandle, cuMemAddressReserve, cuMemMap, cuMemSetAccess. When
  // the home is another GPU, cuDeviceCanAccessPeer must allow it. Blocks. Errors:
  // Invalid for a negative fd or 0 bytes, or when the fd holds memory of another GPU
  // than `home_ordinal`; Unsupported when this GPU has no peer path to the home; the
  // mapped kind of a driver failure, naming the fd, its size and both GPUs.
  static Result<std::unique_ptr<CudaImportedMemory>> import(const CudaContext& context, int fd, std::size_t bytes,
                                                            int home_ordinal);

  // Unmaps, frees the address range, then releases the imported handle; the exporter's
  // memory stays (VMM handles are reference counted).
  ~CudaImportedMemory() override = default;

  // Where the memory is mapped in this process, for this GPU.
  std::uint64_t device_address() const noexcept override { return mapping_.get(); }
  std::size_t bytes() const noexcept { return mapping_.bytes(); }

 private:
  CudaImportedMemory() = default;
  // Declaration order is release order reversed: unmap, free the range, release.
  UniqueCuMemHandle handle_;
  UniqueCuAddressRange range_;
  UniqueCuMapping mapping_;
};

}  // namespace accord::devices::cuda
