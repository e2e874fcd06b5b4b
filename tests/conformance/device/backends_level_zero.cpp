// The level_zero backend in the device conformance suite: npu:0 opened through its
// catalog entry, driving the NPU emulator through the real Level Zero loader. The
// emulator is found through ZE_ENABLE_ALT_DRIVERS when the environment sets it, else
// ACCORD_NPU_EMULATOR_PATH, else at its place in this build tree (this executable is
// <build>/tests/conformance/device/, the emulator <build>/daemon/devices/npu_emulator/).
// Without one the backend is absent and every test skips, naming the reason.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "tests/conformance/device/device_conformance.h"

namespace accord::devices {
void register_level_zero(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::conformance {
namespace {

std::string emulator_in_build_tree() {
  char exe[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return {};
  std::string dir(exe, static_cast<std::size_t>(n));
  for (int up = 0; up < 4; ++up) dir = dir.substr(0, dir.find_last_of('/'));
  return dir + "/daemon/devices/npu_emulator/libaccord_npu_emulator.so";
}

Result<std::unique_ptr<Device>> make_level_zero() {
  // The loader reads ZE_ENABLE_ALT_DRIVERS at the process's first zeInit: set it first.
  if (std::getenv("ZE_ENABLE_ALT_DRIVERS") == nullptr) {
    const char* configured = std::getenv("ACCORD_NPU_EMULATOR_PATH");
    const std::string path = configured != nullptr ? std::string(configured) : emulator_in_build_tree();
    if (path.empty() || ::access(path.c_str(), R_OK) != 0)
      return unsupported_error("level_zero: no NPU and no NPU emulator at '" + path +
                               "' (set ACCORD_NPU_EMULATOR_PATH or ZE_ENABLE_ALT_DRIVERS)");
    ::setenv("ZE_ENABLE_ALT_DRIVERS", path.c_str(), 1);
  }
  return open_from_catalog(&register_level_zero);
}

constexpr const char* kFixedPrograms =
    "NPU code is a compiled program with fixed shapes and no constants, so the suite's add_f32 (a u32 count "
    "constant, several counts) has no NPU equivalent: load() refuses a contract with constants";

constexpr DeviceGap kLevelZeroGaps[] = {
    {"loaded code keeps its name and contract", kFixedPrograms},
    {"a contract that does not match its kernel is Invalid, naming the kernel", kFixedPrograms},
    {"a region of fills, copies and a kernel computes the right values", kFixedPrograms},
    {"a failing kernel reports Execution once, and the device keeps working",
     "the emulator's programs cannot fail once created: every shape is validated at graph creation"},
    {"a launch waits natively for a running predecessor",
     "does not wait natively (waits_natively() is false): the engine orders NPU regions on the host"},
    {"a fault makes the device lost and tells its listener once",
     "the emulator has no fault to inject: an NPU program cannot touch memory outside its arguments"},
};

}  // namespace

const DeviceBackend& device_backend() {
  static const DeviceBackend backend = [] {
    DeviceBackend b;
    b.name = "level_zero";
    b.make_device = &make_level_zero;
    b.gaps = kLevelZeroGaps;
    return b;
  }();
  return backend;
}

}  // namespace accord::devices::conformance
