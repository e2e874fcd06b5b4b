// Backend selection for the device conformance suite. The test files are compiled once
// and linked with exactly one backends_<name>.cpp, which defines device_backend(): how
// to open the device under test, the code the suite runs on it, and the tests the
// backend cannot pass, each with its reason (STYLE.md rule 11, IREE hal/cts).
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/device.h"

namespace accord::devices::conformance {

// A test case this backend cannot pass, and why (one sentence a reviewer can judge).
struct DeviceGap {
  const char* test_name;  // the test case's name, exactly
  const char* reason;
};

// Code the suite loads, in the backend's own format. CodeImage::device is filled in by
// the suite with the device under test's id. A test that needs a kernel the backend
// leaves empty fails, saying so, unless the backend lists that test as a gap.
struct ConformanceCode {
  // out[i] = a[i] + b[i]; loaded with accord::builtin::add_f32(count).contract
  // (a Read, b Read, out Write, f32[count] each; constants: u32 count).
  std::optional<CodeImage> add_f32;
  // Always fails when it runs, with a message; one ReadWrite binding of at least 4
  // bytes, 4-aligned, no constants. Running it must be Execution, not a lost device.
  std::optional<CodeImage> fail;
  // Sleeps the u32 microseconds in its constants, then writes kSleepMarker to the
  // first 4 bytes of its one ReadWrite binding (4 bytes, 4-aligned).
  std::optional<CodeImage> sleep_us;
  // Makes the device lost when it runs (a sticky native fault, such as an illegal
  // address); one ReadWrite binding of at least 4 bytes, 4-aligned, no constants.
  std::optional<CodeImage> fault;
};

struct DeviceBackend {
  // The backend's catalog name ("host"): DeviceInfo::backend of its devices, and the
  // tag its tests carry ("[device][host]").
  const char* name = "";
  // Opens one device of the backend. An error means the backend is absent here (no
  // driver, no hardware): every test then skips with the error's message.
  Result<std::unique_ptr<Device>> (*make_device)() = nullptr;
  ConformanceCode code;
  std::span<const DeviceGap> gaps;
};

// Defined by the one backends_<name>.cpp linked into this executable. Returns a
// function-local static, so test registration may call it during static
// initialisation. Thread-safe.
const DeviceBackend& device_backend();

// Opens the first device of the backend that `register_backend` (the backend's
// register_<name> function, as the composition root calls it) adds to a catalog,
// with `settings` and the backend named explicitly. The factory's error is returned
// as it is (the backend is absent); an empty device list is Unsupported.
Result<std::unique_ptr<Device>> open_from_catalog(void (*register_backend)(BackendCatalog&),
                                                 const DeviceSettings& settings = {});

// What ConformanceCode::sleep_us writes once it has slept (the test plugin's marker).
inline constexpr std::uint32_t kSleepMarker = 0x5EE9D0E5u;

}  // namespace accord::devices::conformance
