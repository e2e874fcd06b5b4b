// A GPU's view of another GPU's VMM memory in the same process (peer access). With
// unified addressing the view is the home's own address: admitting only grants the
// admitting GPU access to the mapping (cuMemSetAccess), so a copy GpuLocal(0) ->
// GpuLocal(1) lowered on GPU 1 reads GPU 0's memory over NVLink or PCIe directly.
#pragma once

#include <memory>
#include <string>

#include "daemon/devices/cuda/cuda_memory.h"
#include "daemon/devices/cuda/cuda_peer_access.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

// Immutable once made: every member is thread-safe.
class CudaPeerAdmission final : public AdmittedMemory {
 public:
  // `memory` (of the GPU of memory.context()) as seen by `context`'s GPU. `device` names
  // the admitting GPU and `home` the memory's ("gpu:0 (cuda:0 (NVIDIA H200))") in
  // errors. Memory of `context`'s own GPU is returned as is, with nothing granted.
  // Blocks. Errors: Unsupported "<device> cannot reach memory of <home>: the driver
  // reports no peer access between them" when cuDeviceCanAccessPeer says no; the mapped
  // kind of a driver failure, naming both GPUs.
  static Result<std::unique_ptr<CudaPeerAdmission>> create(const CudaContext& context, const CudaMemory& memory,
                                                           const std::string& device, const std::string& home);

  // Revokes this GPU's access when no other admission of the memory to it remains.
  ~CudaPeerAdmission() override;

  // The home's own address: one virtual address space for every GPU of the process.
  std::uint64_t device_address() const noexcept override { return device_address_; }

 private:
  CudaPeerAdmission(std::shared_ptr<CudaPeerAccess> access, int ordinal, std::uint64_t address) noexcept
      : access_(std::move(access)), ordinal_(ordinal), device_address_(address) {}

  std::shared_ptr<CudaPeerAccess> access_;  // null for memory of the GPU itself
  int ordinal_;
  std::uint64_t device_address_;
};

}  // namespace accord::devices::cuda
