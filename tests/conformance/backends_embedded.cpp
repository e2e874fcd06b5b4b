// The embedded transport for the conformance suite: the engine runs in the test
// process (accord::Runtime::embedded), with the host device only. It has no known gaps.
// ACCORD_CONFORMANCE_DEVICE_OPTIONS ("backend.key=value" words split at spaces) adds
// backend options to every runtime, so that the [gpu] suite can run with a backend
// setting of its choice (tests/bench/gpu_contexts_rows.sh: cuda.context=auto under MPS).
#include <string>

#include "tests/conformance/conformance_runtime.h"
#include "tests/support/environment_options.h"

accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options) {
  auto extra = accord::testing::options_from_environment("ACCORD_CONFORMANCE_DEVICE_OPTIONS");
  if (!extra.malformed.empty())
    return accord::invalid_error("ACCORD_CONFORMANCE_DEVICE_OPTIONS: '" + extra.malformed +
                                 "' is not backend.key=value");
  accord::RuntimeOptions with = options;
  for (auto& [key, value] : extra.options) with.device_options[key] = std::move(value);
  return accord::Runtime::embedded(with);
}

const char* conformance_transport_name() { return "embedded"; }

std::span<const ConformanceGap> conformance_known_gaps() { return {}; }
