// The NPU emulator as the process's Level Zero NPU driver: the Level Zero loader loads
// the driver libraries ZE_ENABLE_ALT_DRIVERS names, reading the variable at the
// process's first zeInit (daemon/devices/npu_emulator/README.md).
#pragma once

#include <string>

#include "accord/status.h"

namespace accord::emulation {

// The absolute path of libaccord_npu_emulator.so: the build tree's copy when it exists,
// else one installed next to the running binary or in ../lib (and ../lib64) from it.
// Unsupported, with the reason, when this build has no emulator (no Level Zero headers)
// or no copy is found.
Result<std::string> npu_emulator_path();

// Sets ZE_ENABLE_ALT_DRIVERS to npu_emulator_path() for the whole process (setenv), so
// the level_zero backend opened afterwards finds the emulator's NPU. Has no effect on a
// loader that has already run zeInit in this process. Not thread-safe with respect to
// other threads reading the environment (setenv): call it before opening devices.
Status enable_npu_emulator();

}  // namespace accord::emulation
