// ze_result_t -> Status: the one mapping of Level Zero results to Accord's error kinds
// (STYLE.md rule 4), and the macro that converts at the call site, naming the call.
// Stateless: thread-safe.
#pragma once

#include <level_zero/ze_api.h>

#include <source_location>
#include <string>
#include <string_view>

#include "accord/status.h"

namespace accord::devices::level_zero {

// "ZE_RESULT_ERROR_DEVICE_LOST", or "ze_result_t 0x..." for a code this build does not name.
std::string result_name(ze_result_t result);

// The kind an error result means: DeviceLost for a lost device or one that needs a
// reset; Busy when memory ran out; Invalid for malformed arguments and refused blobs;
// Unsupported for features, versions and sizes the driver lacks; Execution otherwise.
// Precondition: `result` is not ZE_RESULT_SUCCESS.
ErrorKind error_kind(ze_result_t result) noexcept;

// Status{error_kind(result), "<call>: <result name>: <context>"}.
Status ze_error(ze_result_t result, std::string_view call, std::string_view context,
               std::source_location where = std::source_location::current());

// The Status a failed launch or a failed fence reports to its sink: DeviceLost when
// error_kind() says so, Execution otherwise (CompletionSink::on_error's two kinds).
Status ze_launch_error(ze_result_t result, std::string_view call, std::string_view context,
                       std::source_location where = std::source_location::current());

}  // namespace accord::devices::level_zero

// Evaluates `expr` (a call returning ze_result_t) and, unless it succeeded, returns
// ze_error(result, call, context) from the enclosing function. `context` is evaluated
// only on failure.
#define ACCORD_ZE_RETURN_IF_ERROR(call, expr, context)                                  \
  do {                                                                                  \
    if (const ze_result_t accord_ze_result_ = (expr); accord_ze_result_ != ZE_RESULT_SUCCESS) \
      return ::accord::devices::level_zero::ze_error(accord_ze_result_, call, context); \
  } while (false)
