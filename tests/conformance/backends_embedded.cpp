// The embedded transport for the conformance suite: the engine runs in the test
// process (accord::Runtime::embedded), with the host device only. It has no known gaps.
#include "tests/conformance/conformance_runtime.h"

accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options) {
  return accord::Runtime::embedded(options);
}

const char* conformance_transport_name() { return "embedded"; }

std::span<const ConformanceGap> conformance_known_gaps() { return {}; }
