// CUresult -> Status (daemon/devices/cuda/cuda_status.cpp): every code the mapping names,
// sticky codes, unknown codes and the message format. No driver needed.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {
namespace {

struct Expected {
  CUresult code;
  ErrorKind kind;
  bool sticky;
};

// Written out independently of the table, so a change to either is a visible decision.
constexpr Expected kExpected[] = {
    {CUDA_ERROR_INVALID_VALUE, ErrorKind::Internal, false},
    {CUDA_ERROR_OUT_OF_MEMORY, ErrorKind::Busy, false},
    {CUDA_ERROR_NOT_INITIALIZED, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_DEINITIALIZED, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_STUB_LIBRARY, ErrorKind::Unsupported, false},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, ErrorKind::Unsupported, false},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_NO_DEVICE, ErrorKind::Unsupported, false},
    {CUDA_ERROR_INVALID_DEVICE, ErrorKind::Internal, false},
    {CUDA_ERROR_INVALID_IMAGE, ErrorKind::Invalid, false},
    {CUDA_ERROR_INVALID_CONTEXT, ErrorKind::Internal, false},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, ErrorKind::Invalid, false},
    {CUDA_ERROR_ECC_UNCORRECTABLE, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_INVALID_PTX, ErrorKind::Invalid, false},
    {CUDA_ERROR_NVLINK_UNCORRECTABLE, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, ErrorKind::Unsupported, false},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, ErrorKind::Unsupported, false},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, ErrorKind::Unsupported, false},
    {CUDA_ERROR_CONTAINED, ErrorKind::Execution, true},
    {CUDA_ERROR_INVALID_SOURCE, ErrorKind::Invalid, false},
    {CUDA_ERROR_OPERATING_SYSTEM, ErrorKind::Internal, false},
    {CUDA_ERROR_INVALID_HANDLE, ErrorKind::Internal, false},
    {CUDA_ERROR_NOT_FOUND, ErrorKind::Unsupported, false},
    {CUDA_ERROR_NOT_READY, ErrorKind::Busy, false},
    {CUDA_ERROR_ILLEGAL_ADDRESS, ErrorKind::Execution, true},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, ErrorKind::Invalid, false},
    {CUDA_ERROR_LAUNCH_TIMEOUT, ErrorKind::Execution, true},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_ASSERT, ErrorKind::Execution, true},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, ErrorKind::Unsupported, false},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, ErrorKind::Execution, true},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, ErrorKind::Execution, true},
    {CUDA_ERROR_MISALIGNED_ADDRESS, ErrorKind::Execution, true},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, ErrorKind::Execution, true},
    {CUDA_ERROR_INVALID_PC, ErrorKind::Execution, true},
    {CUDA_ERROR_LAUNCH_FAILED, ErrorKind::Execution, true},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, ErrorKind::Execution, true},
    {CUDA_ERROR_NOT_PERMITTED, ErrorKind::Unsupported, false},
    {CUDA_ERROR_NOT_SUPPORTED, ErrorKind::Unsupported, false},
    {CUDA_ERROR_SYSTEM_NOT_READY, ErrorKind::Unsupported, false},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, ErrorKind::Unsupported, false},
    {CUDA_ERROR_TIMEOUT, ErrorKind::Busy, false},
    {CUDA_ERROR_EXTERNAL_DEVICE, ErrorKind::DeviceLost, true},
    {CUDA_ERROR_UNKNOWN, ErrorKind::Execution, false},
};

TEST_CASE("every named CUDA code maps to its kind and stickiness", "[cuda][status]") {
  REQUIRE(named_cuda_errors().size() == std::size(kExpected));
  for (const Expected& e : kExpected) {
    INFO(cuda_error_name(e.code));
    CHECK(cuda_error_kind(e.code) == e.kind);
    CHECK(cuda_error_is_sticky(e.code) == e.sticky);
  }
}

TEST_CASE("the table is sorted, its names are unique and spelled as cuda.h spells them", "[cuda][status]") {
  std::set<std::string> names;
  CUresult previous = CUDA_SUCCESS;
  for (const CudaErrorInfo& info : named_cuda_errors()) {
    CHECK(info.code > previous);
    previous = info.code;
    CHECK(names.insert(info.name).second);
    CHECK(std::string(info.name).starts_with("CUDA_ERROR_"));
    CHECK(cuda_error_name(info.code) == info.name);
  }
}

TEST_CASE("an unnamed CUDA code is an Execution failure with its number", "[cuda][status]") {
  // Unnamed, yet inside the enum's range (its values fit in 10 bits): a value outside it
  // would be undefined behaviour, which UBSan rightly reports.
  const auto code = static_cast<CUresult>(1000);
  CHECK(cuda_error_kind(code) == ErrorKind::Execution);
  CHECK_FALSE(cuda_error_is_sticky(code));
  CHECK(cuda_error_name(code) == "CUDA error 1000");
}

TEST_CASE("a CUDA status names the call, the code and the context", "[cuda][status]") {
  const Status status = cuda_status(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "cuMemCreate(&handle, size, &prop, 0)",
                                    "creating 2097152 bytes on gpu:0");
  REQUIRE_FALSE(status.ok());
  CHECK(status.kind() == ErrorKind::Busy);
  CHECK(status.message() == "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY: creating 2097152 bytes on gpu:0");
  CHECK(std::string(status.error()->where.file_name()).ends_with("cuda_status_test.cpp"));
}

}  // namespace
}  // namespace accord::devices::cuda
