// Mapping a VMM allocation handle for one GPU: reserve an address range, map the handle
// there, grant that GPU read-write access. New allocations (CudaMemory) and imported ones
// (CudaImportedMemory) are mapped alike.
#pragma once

#include <cstddef>
#include <string>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_handles.h"

namespace accord::devices::cuda {

// Owns the range and the mapping; the mapping goes first (declared last). Move-only.
struct CudaVmmMapping {
  UniqueCuAddressRange range;
  UniqueCuMapping mapping;
};

// Maps all `bytes` of `handle` for `context`'s GPU (current on the calling thread).
// Errors name the failing call and `what`; whatever was made is released.
Result<CudaVmmMapping> map_for_gpu(const CudaContext& context, CUmemGenericAllocationHandle handle,
                                   std::size_t bytes, const std::string& what);

}  // namespace accord::devices::cuda
