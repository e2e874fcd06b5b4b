// VMM allocations and host registration. Zeroing uses its own non-blocking stream, so
// an allocation never waits behind tenants' work (cuCtxSynchronize would).
#include "daemon/devices/cuda/cuda_memory.h"

#include <memory>
#include <string>

#include "daemon/devices/cuda/cuda_status.h"
#include "daemon/devices/cuda/cuda_vmm_mapping.h"

namespace accord::devices::cuda {
namespace {

std::string gpu_name(const CudaContext& context) { return "gpu:" + std::to_string(context.ordinal); }

}  // namespace

Result<std::unique_ptr<CudaMemory>> CudaMemory::create(const CudaContext& context, std::size_t bytes,
                                                       const CudaMemoryConfig& config) {
  const CudaSymbols& syms = *context.syms;
  const std::size_t unit = config.granularity == 0 ? 1 : config.granularity;
  if (bytes == 0) return invalid_error("cuda: an allocation of 0 bytes on " + gpu_name(context));
  if (bytes > SIZE_MAX - (unit - 1))
    return invalid_error("cuda: an allocation of " + std::to_string(bytes) + " bytes cannot be rounded to " +
                         std::to_string(unit) + "-byte units on " + gpu_name(context));
  const std::size_t size = (bytes + unit - 1) / unit * unit;
  const std::string what = std::to_string(size) + " bytes of GpuLocal memory on " + gpu_name(context);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "allocating " + what);

  std::unique_ptr<CudaMemory> memory(new CudaMemory(context, config.exportable));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = context.ordinal;
  prop.requestedHandleTypes = config.exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  CUmemGenericAllocationHandle handle = 0;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemCreate(&handle, size, &prop, 0), "creating " + what);
  memory->handle_ = UniqueCuMemHandle(syms, context.context, handle);

  ACCORD_ASSIGN_OR_RETURN(CudaVmmMapping mapped, map_for_gpu(context, handle, size, what));
  memory->range_ = std::move(mapped.range);
  memory->mapping_ = std::move(mapped.mapping);
  const CUdeviceptr ptr = memory->mapping_.get();
  memory->peers_ = std::make_shared<CudaPeerAccess>(context, ptr, size);

  // The seed promises zeroed storage, and cuMemCreate gives whatever was there.
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemsetD8Async(ptr, 0, size, config.zero_stream), "zeroing " + what);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuStreamSynchronize(config.zero_stream), "waiting for the zeroing of " + what);
  return memory;
}

CudaMemory::~CudaMemory() {
  if (peers_ != nullptr) peers_->retire();
}

int CudaMemory::export_fd() const noexcept {
  if (!exportable_) return -1;
  const std::lock_guard lock(export_mu_);
  if (!export_tried_) {
    export_tried_ = true;
    // Exported once and kept: a borrowed fd must stay valid while the memory lives.
    int fd = -1;
    if (context_.make_current() == CUDA_SUCCESS &&
        context_.syms->cuMemExportToShareableHandle(&fd, handle_.get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
            CUDA_SUCCESS)
      export_fd_.reset(fd);
  }
  return export_fd_.get();
}

Result<std::unique_ptr<CudaHostAdmission>> CudaHostAdmission::create(const CudaContext& context,
                                                                     const DeviceMemory& memory) {
  const CudaSymbols& syms = *context.syms;
  std::byte* pages = memory.host_address();
  if (pages == nullptr)
    return internal_error("cuda: host registration for " + gpu_name(context) + " of memory that is not host mapped");
  const std::string what =
      std::to_string(memory.bytes()) + " bytes of host-mapped memory for " + gpu_name(context);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "registering " + what);
  std::unique_ptr<CudaHostAdmission> admission(new CudaHostAdmission());
  ACCORD_ASSIGN_OR_RETURN(admission->pin_, CudaHostRegistry::process().pin(context, pages, memory.bytes(), what));
  // Asked in this GPU's context even when another GPU registered the pages: the pointer
  // is per context (the same as the host's under unified addressing, but not promised).
  CUdeviceptr device_address = 0;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemHostGetDevicePointer(&device_address, pages, 0),
                            "asking the device address of " + what);
  admission->device_address_ = device_address;
  return admission;
}

}  // namespace accord::devices::cuda
