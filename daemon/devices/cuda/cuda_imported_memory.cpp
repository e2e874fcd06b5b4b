// Import of another process's VMM memory. The home is checked twice: the caller's word
// against the allocation's own location (cuMemGetAllocationPropertiesFromHandle), since a
// wrong ordinal would otherwise surface as an access fault much later, and the peer path
// before mapping, since cuMemSetAccess on an unreachable pair names neither GPU.
#include "daemon/devices/cuda/cuda_imported_memory.h"

#include <cstdint>
#include <string>

#include "daemon/devices/cuda/cuda_status.h"
#include "daemon/devices/cuda/cuda_vmm_mapping.h"

namespace accord::devices::cuda {
namespace {

std::string gpu_name(int ordinal) { return "gpu:" + std::to_string(ordinal); }

}  // namespace

Result<std::unique_ptr<CudaImportedMemory>> CudaImportedMemory::import(const CudaContext& context, int fd,
                                                                       std::size_t bytes, int home_ordinal) {
  const CudaSymbols& syms = *context.syms;
  const std::string what = std::to_string(bytes) + " bytes of GpuLocal memory of " + gpu_name(home_ordinal) +
                           " (fd " + std::to_string(fd) + ") for " + gpu_name(context.ordinal);
  if (fd < 0) return invalid_error("cuda: cannot import " + what + ": the fd is not valid");
  if (bytes == 0) return invalid_error("cuda: cannot import " + what + ": no bytes");
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "importing " + what);

  if (home_ordinal != context.ordinal) {
    CUdevice home = 0;
    ACCORD_CU_RETURN_IF_ERROR(syms, cuDeviceGet(&home, home_ordinal), "finding the home of " + what);
    int reachable = 0;
    ACCORD_CU_RETURN_IF_ERROR(syms, cuDeviceCanAccessPeer(&reachable, context.device, home),
                              "asking for a peer path for " + what);
    if (reachable == 0)
      return unsupported_error(gpu_name(context.ordinal) + " cannot reach memory of " + gpu_name(home_ordinal) +
                               " (fd " + std::to_string(fd) + "): the driver reports no peer access between them");
  }

  std::unique_ptr<CudaImportedMemory> memory(new CudaImportedMemory());
  CUmemGenericAllocationHandle handle = 0;
  // The handle argument is the fd itself, carried in a pointer (cuda.h).
  ACCORD_CU_RETURN_IF_ERROR(syms,
                            cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                            "importing " + what);
  memory->handle_ = UniqueCuMemHandle(syms, context.context, handle);
  CUmemAllocationProp prop{};
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemGetAllocationPropertiesFromHandle(&prop, handle),
                            "asking where the memory of " + what + " lives");
  if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop.location.id != home_ordinal)
    return invalid_error("cuda: cannot import " + what + ": the fd holds memory of " +
                         (prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? gpu_name(prop.location.id)
                                                                            : std::string("the host")));

  ACCORD_ASSIGN_OR_RETURN(CudaVmmMapping mapped, map_for_gpu(context, handle, bytes, what));
  memory->range_ = std::move(mapped.range);
  memory->mapping_ = std::move(mapped.mapping);
  return memory;
}

}  // namespace accord::devices::cuda
