// Loads the CUDA driver: dlopen, then cuGetProcAddress for every table entry (the
// versioned export is the one dlsym'd symbol), then cuInit. Errors are "cuda: ..."
// messages the registry records as the backend's absence reason.
#include "daemon/devices/cuda/cuda_symbols.h"

#include <dlfcn.h>

#include <cstdlib>

#include <string>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {
namespace {

// cuda.h maps cuGetProcAddress to its versioned export; that export is what dlsym finds.
using GetProcAddressFn = decltype(&::cuGetProcAddress);
constexpr const char* kGetProcAddressExport = "cuGetProcAddress_v2";

// Resolves `name` at CUDA_VERSION into `slot`. A symbol the driver lacks leaves `slot`
// null and returns the reason.
Status resolve(GetProcAddressFn get_proc, const CudaSymbols& syms, const char* name, void** slot) {
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && *slot != nullptr) return Status();
  *slot = nullptr;
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_NOT_FOUND) {
    const std::string why = found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                ? " (the driver is older than CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
                                      std::to_string(CUDA_VERSION % 1000 / 10) + ", which this entry point needs)"
                                : std::string(" (not exported by the driver)");
    return unsupported_error(std::string("cuda: driver entry point ") + name + " is missing" + why);
  }
  // Any other answer: the error-string functions may not be resolved yet, so describe it
  // with what we have. (The link-time stub answers every call CUDA_ERROR_STUB_LIBRARY.)
  const Status status = cuda_status(syms.cuGetErrorName != nullptr ? &syms : nullptr, result, "cuGetProcAddress",
                                    std::string("resolving ") + name);
  return unsupported_error("cuda: " + std::string(status.message()));
}

}  // namespace

Result<std::shared_ptr<const CudaSymbols>> CudaSymbols::load(const CudaLoaderOptions& options) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  // Before the driver starts: it reads the variable when it creates a context. A value
  // the process has wins over the default (overwrite 0), a configured one over that.
  if (options.max_connections_configured && options.max_connections == 0)
    ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  else if (options.max_connections > 0)
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(options.max_connections).c_str(),
             options.max_connections_configured ? 1 : 0);
  std::shared_ptr<CudaSymbols> syms(new CudaSymbols());
  syms->library_name_ = options.library;
  // RTLD_LOCAL: the driver's symbols are reached through the table only.
  syms->library_.reset(::dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!syms->library_) {
    const char* error = ::dlerror();
    return unsupported_error("cuda: " + options.library + " not found (" +
                             (error != nullptr ? error : "dlopen failed") + ")");
  }
  auto get_proc = reinterpret_cast<GetProcAddressFn>(syms->library_.symbol(kGetProcAddressExport));
  if (get_proc == nullptr)
    return unsupported_error("cuda: " + options.library + " has no " + kGetProcAddressExport +
                             " (a driver older than CUDA 12.0)");

#define ACCORD_CU_REQUIRED(name)                                                                   \
  ACCORD_RETURN_IF_ERROR(resolve(get_proc, *syms, #name, reinterpret_cast<void**>(&syms->name)));
#define ACCORD_CU_OPTIONAL(name) \
  static_cast<void>(resolve(get_proc, *syms, #name, reinterpret_cast<void**>(&syms->name)));
#include "daemon/devices/cuda/cuda_symbol_table.inc"
#undef ACCORD_CU_REQUIRED
#undef ACCORD_CU_OPTIONAL

  const CUresult init = syms->cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE)
    return unsupported_error("cuda: no CUDA devices (cuInit: CUDA_ERROR_NO_DEVICE)");
  if (init != CUDA_SUCCESS) {
    // Whatever the code (the link-time stub says CUDA_ERROR_STUB_LIBRARY), the backend is
    // absent: Unsupported with the driver's words.
    const Status status = cuda_status(syms.get(), init, "cuInit", "starting the driver in " + options.library);
    return unsupported_error("cuda: " + std::string(status.message()));
  }
  ACCORD_CU_RETURN_IF_ERROR(*syms, cuDriverGetVersion(&syms->driver_version_), "asking the driver's version");
  return std::shared_ptr<const CudaSymbols>(std::move(syms));
}

}  // namespace accord::devices::cuda
