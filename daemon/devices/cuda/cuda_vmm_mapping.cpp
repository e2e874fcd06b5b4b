#include "daemon/devices/cuda/cuda_vmm_mapping.h"

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

Result<CudaVmmMapping> map_for_gpu(const CudaContext& context, CUmemGenericAllocationHandle handle,
                                   std::size_t bytes, const std::string& what) {
  const CudaSymbols& syms = *context.syms;
  CudaVmmMapping out;
  CUdeviceptr ptr = 0;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemAddressReserve(&ptr, bytes, 0, 0, 0), "reserving addresses for " + what);
  out.range = UniqueCuAddressRange(syms, context.context, ptr, bytes);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemMap(ptr, bytes, 0, handle, 0), "mapping " + what);
  out.mapping = UniqueCuMapping(syms, context.context, ptr, bytes);
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = context.ordinal;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemSetAccess(ptr, bytes, &access, 1), "granting access to " + what);
  return out;
}

}  // namespace accord::devices::cuda
