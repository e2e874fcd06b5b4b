// The one CUresult -> ErrorKind table of the CUDA backend, and the message format.
// A code earns an entry when the backend can meet it and a better kind than Execution
// exists for it, or when it is sticky; the unit test walks every entry.
#include "daemon/devices/cuda/cuda_status.h"

#include <algorithm>
#include <array>

#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::devices::cuda {
namespace {

using K = ErrorKind;

// Ascending by code (binary-searched). Sticky codes: the kernel faults the H200 keeps for
// the whole context, and the device-level failures.
constexpr std::array<CudaErrorInfo, 44> kErrors{{
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", K::Internal, false},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", K::Busy, false},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", K::DeviceLost, true},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", K::DeviceLost, true},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", K::Unsupported, false},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", K::Unsupported, false},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", K::DeviceLost, true},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", K::Unsupported, false},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", K::Internal, false},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", K::Invalid, false},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", K::Internal, false},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", K::Invalid, false},
    {CUDA_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE", K::DeviceLost, true},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", K::Invalid, false},
    {CUDA_ERROR_NVLINK_UNCORRECTABLE, "CUDA_ERROR_NVLINK_UNCORRECTABLE", K::DeviceLost, true},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", K::Unsupported, false},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", K::Unsupported, false},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, "CUDA_ERROR_JIT_COMPILATION_DISABLED", K::Unsupported, false},
    {CUDA_ERROR_CONTAINED, "CUDA_ERROR_CONTAINED", K::Execution, true},
    {CUDA_ERROR_INVALID_SOURCE, "CUDA_ERROR_INVALID_SOURCE", K::Invalid, false},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", K::Internal, false},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", K::Internal, false},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", K::Unsupported, false},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", K::Busy, false},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", K::Execution, true},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", K::Invalid, false},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", K::Execution, true},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", K::DeviceLost, true},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", K::Execution, true},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", K::Unsupported, false},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", K::Execution, true},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION", K::Execution, true},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", K::Execution, true},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE", K::Execution, true},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", K::Execution, true},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", K::Execution, true},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK", K::Execution, true},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", K::Unsupported, false},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", K::Unsupported, false},
    {CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY", K::Unsupported, false},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", K::Unsupported, false},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", K::Busy, false},
    {CUDA_ERROR_EXTERNAL_DEVICE, "CUDA_ERROR_EXTERNAL_DEVICE", K::DeviceLost, true},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", K::Execution, false},
}};

const CudaErrorInfo* find(CUresult result) noexcept {
  const auto it = std::lower_bound(kErrors.begin(), kErrors.end(), result,
                                   [](const CudaErrorInfo& e, CUresult r) { return e.code < r; });
  return it != kErrors.end() && it->code == result ? &*it : nullptr;
}

}  // namespace

std::span<const CudaErrorInfo> named_cuda_errors() noexcept { return kErrors; }

ErrorKind cuda_error_kind(CUresult result) noexcept {
  const CudaErrorInfo* info = find(result);
  return info != nullptr ? info->kind : ErrorKind::Execution;
}

bool cuda_error_is_sticky(CUresult result) noexcept {
  const CudaErrorInfo* info = find(result);
  return info != nullptr && info->sticky;
}

std::string cuda_error_name(CUresult result) {
  if (const CudaErrorInfo* info = find(result)) return info->name;
  return "CUDA error " + std::to_string(static_cast<int>(result));
}

Status cuda_status(const CudaSymbols* syms, CUresult result, std::string_view call, std::string_view context,
                   std::source_location where) {
  std::string message(call.substr(0, call.find('(')));
  message += ": ";
  // The driver's own name when it knows the code (it may know newer ones than we do).
  const char* driver_name = nullptr;
  if (syms != nullptr && syms->cuGetErrorName != nullptr && syms->cuGetErrorName(result, &driver_name) == CUDA_SUCCESS &&
      driver_name != nullptr)
    message += driver_name;
  else
    message += cuda_error_name(result);
  const char* description = nullptr;
  if (syms != nullptr && syms->cuGetErrorString != nullptr &&
      syms->cuGetErrorString(result, &description) == CUDA_SUCCESS && description != nullptr) {
    message += " (";
    message += description;
    message += ")";
  }
  if (!context.empty()) {
    message += ": ";
    message += context;
  }
  return Status::error(cuda_error_kind(result), std::move(message), where);
}

}  // namespace accord::devices::cuda
