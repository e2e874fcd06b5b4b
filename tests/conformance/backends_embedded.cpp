// The embedded transport for the conformance suite: the engine runs in the test
// process (accord::Runtime::embedded), with the host device only. It has no known gaps.
// ACCORD_CONFORMANCE_DEVICE_OPTIONS ("backend.key=value" words split at spaces) adds
// backend options to every runtime, so that the [gpu] suite can run with a backend
// setting of its choice (tests/bench/gpu_contexts_rows.sh: cuda.context=auto under MPS).
#include <cstdlib>
#include <sstream>
#include <string>

#include "tests/conformance/conformance_runtime.h"

accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options) {
  const char* extra = std::getenv("ACCORD_CONFORMANCE_DEVICE_OPTIONS");
  if (extra == nullptr || *extra == '\0') return accord::Runtime::embedded(options);
  accord::RuntimeOptions with = options;
  std::istringstream words(extra);
  for (std::string word; words >> word;) {
    const std::size_t equals = word.find('=');
    if (equals == std::string::npos)
      return accord::invalid_error("ACCORD_CONFORMANCE_DEVICE_OPTIONS: '" + word + "' is not backend.key=value");
    with.device_options[word.substr(0, equals)] = word.substr(equals + 1);
  }
  return accord::Runtime::embedded(with);
}

const char* conformance_transport_name() { return "embedded"; }

std::span<const ConformanceGap> conformance_known_gaps() { return {}; }
