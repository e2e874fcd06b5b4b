// DEVICE_TEST_CASE: a Catch2 test case written once against the Device interface and
// run on this executable's backend. It is tagged "[device][<backend>]" plus its own
// tags, skips with the reason when the backend lists it as a gap or is absent here, and
// otherwise runs its body with `device`, a freshly opened device shut down afterwards.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "tests/conformance/device/device_conformance.h"
#include "tests/support/catch_accord_strings.h"

namespace accord::devices::conformance {

// The reason this backend lists the running test case as a gap, or null.
const char* known_gap_reason();

// Registers `invoker` with Catch2 under `name`, tagged "[device][<backend>]" + `tags`.
// Runs during static initialisation; Catch2 copies the strings.
struct DeviceTestRegistrar {
  DeviceTestRegistrar(void (*invoker)(), const char* name, const char* tags,
                      const Catch::SourceLineInfo& line);
};

// Opens the device under test and runs `Body` on it, or skips: Catch2 v2 has no skip,
// so the WARN beginning "skipped:" is the record that nothing was checked, and ctest
// reports the case as skipped (SKIP_REGULAR_EXPRESSION in CMakeLists.txt).
template <void (*Body)(Device&)>
void run_device_test() {
  const DeviceBackend& backend = device_backend();
  if (const char* reason = known_gap_reason()) {
    WARN("skipped: a known gap of the '" << backend.name << "' backend: " << reason);
    return;
  }
  auto made = backend.make_device();
  if (!made.ok()) {
    WARN("skipped: backend '" << backend.name << "' is absent here: " << made.status().message());
    return;
  }
  std::unique_ptr<Device> device = std::move(made).value();
  REQUIRE(device != nullptr);
  Body(*device);
  // The engine's order: shut the device down, then release it. A body may have shut it
  // down already; a second call must be harmless.
  device->shut_down();
}

}  // namespace accord::devices::conformance

#define ACCORD_DEVICE_CAT2(a, b) a##b
#define ACCORD_DEVICE_CAT(a, b) ACCORD_DEVICE_CAT2(a, b)
#define ACCORD_DEVICE_TEST_CASE_IMPL(fn, name, tags)                                             \
  static void fn(::accord::devices::Device& device);                                           \
  namespace {                                                                                   \
  const ::accord::devices::conformance::DeviceTestRegistrar ACCORD_DEVICE_CAT(fn, _registrar){ \
      &::accord::devices::conformance::run_device_test<&fn>, name, tags, CATCH_INTERNAL_LINEINFO}; \
  }                                                                                             \
  static void fn([[maybe_unused]] ::accord::devices::Device& device)

// DEVICE_TEST_CASE("a device names its kind", "[identity]") { ... device.info() ... }
#define DEVICE_TEST_CASE(name, tags) \
  ACCORD_DEVICE_TEST_CASE_IMPL(ACCORD_DEVICE_CAT(accord_device_test_, __COUNTER__), name, tags)
