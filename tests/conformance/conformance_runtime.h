// Transport selection for the API conformance suite. The test files are compiled once
// and linked with exactly one backends_<transport>.cpp, which implements the functions
// below; the same tests then run unchanged against every transport (STYLE.md rule 11).
#pragma once

#include <span>

#include "accord/accord.h"

// Creates a runtime over this executable's transport with `options`. Invalid options
// must come back as the transport's Invalid error, not be corrected. A transport that
// cannot run here (no daemon socket, ...) returns Unsupported with the reason; the
// suite then skips with that message instead of passing vacuously.
accord::Result<accord::Runtime> make_conformance_runtime(const accord::RuntimeOptions& options = {});

// Short name of the transport ("embedded", "daemon"), for messages.
const char* conformance_transport_name();

// A test case this transport cannot pass, and why (one sentence a reviewer can judge).
struct ConformanceGap {
  const char* test_name;  // the Catch2 TEST_CASE name, exactly
  const char* reason;
};

// The transport's known gaps, in one place. A listed test case ends at its first
// CONFORMANCE_RUNTIME with a WARN giving the reason, instead of running.
std::span<const ConformanceGap> conformance_known_gaps();
