// Peer admission. The driver is asked first (cuDeviceCanAccessPeer), because
// cuMemSetAccess on a pair without a peer path fails with a code that names neither GPU.
// No cuCtxEnablePeerAccess: that switch is for cuMemAlloc memory; a VMM mapping is
// reachable by exactly the devices cuMemSetAccess names.
#include "daemon/devices/cuda/cuda_peer_admission.h"

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

Result<std::unique_ptr<CudaPeerAdmission>> CudaPeerAdmission::create(const CudaContext& context,
                                                                     const CudaMemory& memory,
                                                                     const std::string& device,
                                                                     const std::string& home) {
  const CudaContext& owner = memory.context();
  if (owner.context == context.context)
    return std::unique_ptr<CudaPeerAdmission>(new CudaPeerAdmission(nullptr, context.ordinal, memory.device_address()));
  const CudaSymbols& syms = *context.syms;
  const std::string pair = device + " and memory of " + home;
  int reachable = 0;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuDeviceCanAccessPeer(&reachable, context.device, owner.device),
                            "asking for a peer path between " + pair);
  if (reachable == 0)
    return unsupported_error(device + " cannot reach memory of " + home +
                             ": the driver reports no peer access between them");
  std::shared_ptr<CudaPeerAccess> access = memory.peer_access();
  ACCORD_RETURN_IF_ERROR(access->acquire(context.ordinal, "access for " + pair));
  return std::unique_ptr<CudaPeerAdmission>(
      new CudaPeerAdmission(std::move(access), context.ordinal, memory.device_address()));
}

CudaPeerAdmission::~CudaPeerAdmission() {
  if (access_ != nullptr) access_->release(ordinal_);
}

}  // namespace accord::devices::cuda
