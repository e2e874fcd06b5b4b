// CudaSymbols: the CUDA driver opened at run time. libcuda.so.1 is dlopen'd and every
// entry point in cuda_symbol_table.inc is resolved through cuGetProcAddress, so accordd
// links no CUDA library and starts (and runs its non-GPU tests) where there is no
// driver (reference/platform-notes.md: a binary linked to the stub exits 127 there).
// Immutable once loaded: every member is thread-safe. Shared by the devices of the
// backend; keep it alive as long as any pointer taken from it may be called.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "accord/status.h"
#include "client/api/unique_dl_handle.h"

namespace accord::devices::cuda {

// Where the driver comes from. Tests point `library` at a name that does not exist to
// see the absent-driver path on any machine.
struct CudaLoaderOptions {
  std::string library = "libcuda.so.1";
  // cuda.max_connections (0..32): the hardware work queues the driver opens per context
  // (CUDA_DEVICE_MAX_CONNECTIONS, read when a context is created). The driver's default
  // of 8 makes streams of different tenants share queues, and a tenant's kernel then
  // waits behind another's: Accord puts every tenant in one context, where MPS gives
  // each client its own queues. Set in the environment before cuInit unless the process
  // already sets it; 0 leaves the driver's default. Process-wide, and without effect in
  // a process that created its CUDA context before loading the backend.
  std::uint32_t max_connections = 32;
  // Set when max_connections was configured (the option cuda.max_connections) rather
  // than left at its default: it then replaces a value found in the environment, and 0
  // removes it. A GPU executor inherits the variable its parent's own loader set, so
  // only this lets a value configured for the executor (2 under MPS, where every
  // client's queues count against the server's device connections) take effect.
  bool max_connections_configured = false;
  Status validate() const {
    if (library.empty()) return invalid_error("cuda: option cuda.library is empty");
    if (max_connections > 32)
      return invalid_error("cuda: option cuda.max_connections = " + std::to_string(max_connections) +
                           " is not in 0..32");
    return Status();
  }
};

class CudaSymbols {
 public:
  // Opens `options.library`, resolves every symbol of the table at CUDA_VERSION and
  // calls cuInit(0). Blocks on dlopen and driver start-up. Thread-safe.
  // Errors (the message starts with "cuda: ", as the registry shows it):
  //   Unsupported "cuda: libcuda.so.1 not found (<dlerror>)" when the library is absent;
  //   Unsupported when cuGetProcAddress or a required symbol is missing (an old driver,
  //   the link-time stub), naming the symbol;
  //   Unsupported "cuda: no CUDA devices (...)" when cuInit finds none;
  //   the mapped kind of any other cuInit failure, naming it.
  static Result<std::shared_ptr<const CudaSymbols>> load(const CudaLoaderOptions& options = {});

  CudaSymbols(const CudaSymbols&) = delete;
  CudaSymbols& operator=(const CudaSymbols&) = delete;

  // The driver's CUDA version (cuDriverGetVersion: 13000 for 13.0).
  int driver_version() const noexcept { return driver_version_; }
  // The library as it was opened ("libcuda.so.1").
  const std::string& library() const noexcept { return library_name_; }

  // One function pointer per table entry; optional ones may be null.
#define ACCORD_CU_REQUIRED(name) decltype(&::name) name = nullptr;
#define ACCORD_CU_OPTIONAL(name) decltype(&::name) name = nullptr;
#include "daemon/devices/cuda/cuda_symbol_table.inc"
#undef ACCORD_CU_REQUIRED
#undef ACCORD_CU_OPTIONAL

 private:
  CudaSymbols() = default;

  UniqueDlHandle library_;
  std::string library_name_;
  int driver_version_ = 0;
};

}  // namespace accord::devices::cuda
