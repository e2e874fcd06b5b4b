// The one ze_result_t -> ErrorKind mapping (STYLE.md rule 4): every code the backend
// names, and the message shape "<call>: <result>: <context>".
#include <catch2/catch.hpp>

#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {

TEST_CASE("every named Level Zero result maps to its error kind", "[npu][level_zero]") {
  const struct {
    ze_result_t result;
    ErrorKind kind;
  } cases[] = {
      {ZE_RESULT_ERROR_DEVICE_LOST, ErrorKind::DeviceLost},
      {ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, ErrorKind::DeviceLost},
      {ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, ErrorKind::Busy},
      {ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, ErrorKind::Busy},
      {ZE_RESULT_ERROR_INVALID_ARGUMENT, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_INVALID_NULL_POINTER, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_INVALID_SIZE, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_INVALID_ENUMERATION, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_OVERLAPPING_REGIONS, ErrorKind::Invalid},
      {ZE_RESULT_ERROR_UNINITIALIZED, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_UNSUPPORTED_VERSION, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_UNSUPPORTED_SIZE, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_NOT_AVAILABLE, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, ErrorKind::Unsupported},
      {ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, ErrorKind::Unsupported},
      {ZE_RESULT_NOT_READY, ErrorKind::Execution},
      {ZE_RESULT_ERROR_INVALID_NULL_HANDLE, ErrorKind::Execution},
      {ZE_RESULT_ERROR_UNKNOWN, ErrorKind::Execution},
  };
  for (const auto& c : cases) {
    INFO(result_name(c.result));
    CHECK(error_kind(c.result) == c.kind);
    CHECK(result_name(c.result).rfind("ZE_RESULT_", 0) == 0);
  }
  CHECK(result_name(static_cast<ze_result_t>(0x12345)) == "ze_result_t 0x12345");
}

TEST_CASE("a Level Zero error names the call, the result and the context", "[npu][level_zero]") {
  const Status status = ze_error(ZE_RESULT_ERROR_INVALID_SIZE, "zeCommandListCreate", "slot 2");
  CHECK(status.kind() == ErrorKind::Invalid);
  CHECK(status.message() == "zeCommandListCreate: ZE_RESULT_ERROR_INVALID_SIZE: slot 2");
  // What a sink is told: Execution unless the device is lost.
  CHECK(ze_launch_error(ZE_RESULT_ERROR_INVALID_SIZE, "zeFenceHostSynchronize", "").kind() == ErrorKind::Execution);
  CHECK(ze_launch_error(ZE_RESULT_ERROR_DEVICE_LOST, "zeFenceHostSynchronize", "").kind() == ErrorKind::DeviceLost);
}

}  // namespace accord::devices::level_zero
