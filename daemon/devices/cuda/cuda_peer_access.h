// Which other GPUs of the process may touch one VMM allocation (cuMemSetAccess), and
// how many admissions rely on each grant. CudaMemory owns one; every CudaPeerAdmission
// shares it, so the grant is made by the first admission of a GPU and revoked by its
// last, and an admission that outlives its memory (the engine never lets one, but a
// stale pointer must not revoke access to whatever is mapped at that address next)
// leaves the range alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_handles.h"

namespace accord::devices::cuda {

// Thread-safe: every member takes one mutex, held across the driver's access calls so
// that a grant and a revocation for the same GPU never interleave.
class CudaPeerAccess {
 public:
  // The mapped range [address, address + bytes) of memory living on `home`'s GPU.
  CudaPeerAccess(const CudaContext& home, CUdeviceptr address, std::size_t bytes) noexcept
      : home_(home), address_(address), bytes_(bytes) {}

  // One more user of GPU `ordinal`'s access: the first grants read-write access to the
  // whole range (with the home context current). `what` names the memory and the GPU in
  // errors. Errors: Internal when the memory is already unmapping; the mapped kind of a
  // cuMemSetAccess failure.
  Status acquire(int ordinal, const std::string& what);
  // One user fewer; the last revokes the access (PROT_NONE), unless the memory is gone.
  // A refused revocation is ignored: the access then ends when the memory unmaps.
  void release(int ordinal) noexcept;
  // The memory is about to unmap: no call touches the range after this returns.
  void retire() noexcept;

  // Users of GPU `ordinal`'s access now.
  std::uint32_t users(int ordinal) const;

 private:
  mutable std::mutex mu_;
  CudaContext home_;
  CUdeviceptr address_;
  std::size_t bytes_;
  bool retired_ = false;
  std::vector<std::pair<int, std::uint32_t>> users_;  // (ordinal, users): one per peer GPU
};

}  // namespace accord::devices::cuda
