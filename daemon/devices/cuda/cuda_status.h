// CUresult -> Status, in one place (STYLE.md rule 4). Every driver call goes through
// ACCORD_CU_RETURN_IF_ERROR (or cuda_status() where the caller must clean up first), so
// a message always names the call, the code and what the backend was doing:
//   "cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY (out of memory): creating the compute
//    stream of gpu:0"
// Thread-safe: pure functions over constant tables.
#pragma once

#include <cuda.h>

#include <source_location>
#include <span>
#include <string>
#include <string_view>

#include "accord/status.h"

namespace accord::devices::cuda {

class CudaSymbols;

// A code the backend names, the ErrorKind it becomes and whether it is sticky.
struct CudaErrorInfo {
  CUresult code;
  const char* name;  // "CUDA_ERROR_ILLEGAL_ADDRESS"
  ErrorKind kind;
  // Sticky: the context is unusable after it (every later call fails the same way), so
  // the device is reported lost (reference/platform-notes.md, GPU faults).
  bool sticky;
};

// Every code the mapping names, in ascending order (the unit test walks them).
std::span<const CudaErrorInfo> named_cuda_errors() noexcept;

// The kind `result` maps to. Named codes: their table entry (kernel faults are
// Execution, a vanished device DeviceLost, bad images Invalid, missing features
// Unsupported, out of memory Busy, misuse of the driver Internal). Any other failure is
// Execution: a native failure the backend has no better word for. Precondition:
// result != CUDA_SUCCESS.
ErrorKind cuda_error_kind(CUresult result) noexcept;
// True when `result` leaves the context unusable (see CudaErrorInfo::sticky).
bool cuda_error_is_sticky(CUresult result) noexcept;
// "CUDA_ERROR_ILLEGAL_ADDRESS", or "CUDA error 1234" for a code the table lacks.
std::string cuda_error_name(CUresult result);

// The Status of a failed `call` ("cuMemCreate" or the whole call text; the name is cut
// at the first '('): "<call>: <NAME> (<driver description>): <context>". `syms` may be
// null (no driver description then). Precondition: result != CUDA_SUCCESS.
Status cuda_status(const CudaSymbols* syms, CUresult result, std::string_view call, std::string_view context,
                   std::source_location where = std::source_location::current());

}  // namespace accord::devices::cuda

// Calls `syms.call` (a call expression through the symbol table, e.g.
// `cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)`) and returns its Status from the
// enclosing function when it fails. `context` (a string expression) is evaluated only
// on failure.
#define ACCORD_CU_RETURN_IF_ERROR(syms, call, context)                                         \
  do {                                                                                         \
    if (const CUresult accord_cu_result_ = (syms).call; accord_cu_result_ != CUDA_SUCCESS)     \
      return ::accord::devices::cuda::cuda_status(&(syms), accord_cu_result_, #call, (context)); \
  } while (false)
