// The one table from ze_result_t to ErrorKind, and the names of the results.
#include "daemon/devices/level_zero/level_zero_status.h"

#include <cstdio>

namespace accord::devices::level_zero {

std::string result_name(ze_result_t result) {
  switch (result) {
#define ACCORD_ZE_NAME(r) \
  case r: return #r;
    ACCORD_ZE_NAME(ZE_RESULT_SUCCESS)
    ACCORD_ZE_NAME(ZE_RESULT_NOT_READY)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_DEVICE_LOST)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_NOT_AVAILABLE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNINITIALIZED)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_SIZE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_ENUMERATION)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)
    ACCORD_ZE_NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef ACCORD_ZE_NAME
    default: break;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "ze_result_t 0x%x", static_cast<unsigned>(result));
  return text;
}

ErrorKind error_kind(ze_result_t result) noexcept {
  switch (result) {
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
      return ErrorKind::DeviceLost;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
      return ErrorKind::Busy;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_INVALID_ENUMERATION:
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
      return ErrorKind::Invalid;
    case ZE_RESULT_ERROR_UNINITIALIZED:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
    case ZE_RESULT_ERROR_NOT_AVAILABLE:
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
    case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
      return ErrorKind::Unsupported;
    default:
      return ErrorKind::Execution;
  }
}

Status ze_error(ze_result_t result, std::string_view call, std::string_view context, std::source_location where) {
  std::string message(call);
  message += ": ";
  message += result_name(result);
  if (!context.empty()) {
    message += ": ";
    message += context;
  }
  return Status::error(error_kind(result), std::move(message), where);
}

Status ze_launch_error(ze_result_t result, std::string_view call, std::string_view context,
                       std::source_location where) {
  Status status = ze_error(result, call, context, where);
  if (status.kind() == ErrorKind::DeviceLost) return status;
  return Status::error(ErrorKind::Execution, std::string(status.message()), where);
}

}  // namespace accord::devices::level_zero
