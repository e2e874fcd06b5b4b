#include "daemon/emulation/npu_emulator_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <system_error>

namespace accord::emulation {

Result<std::string> npu_emulator_path() {
#ifndef ACCORD_NPU_EMULATOR_PATH
  return unsupported_error("this build has no NPU emulator (it was built without the Level Zero headers)");
#else
  std::error_code ec;
  const std::filesystem::path built(ACCORD_NPU_EMULATOR_PATH);
  if (std::filesystem::is_regular_file(built, ec)) return built.string();
  std::string tried = built.string();
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path dir = self.parent_path();
    for (const std::filesystem::path& candidate :
         {dir / ACCORD_NPU_EMULATOR_FILE, dir / ".." / "lib" / ACCORD_NPU_EMULATOR_FILE,
          dir / ".." / "lib64" / ACCORD_NPU_EMULATOR_FILE}) {
      if (std::filesystem::is_regular_file(candidate, ec))
        return std::filesystem::weakly_canonical(candidate, ec).string();
      tried += ", " + candidate.string();
    }
  }
  return unsupported_error("the NPU emulator library was not found (tried " + tried + ")");
#endif
}

Status enable_npu_emulator() {
  ACCORD_ASSIGN_OR_RETURN(std::string path, npu_emulator_path());
  if (const char* current = std::getenv("ZE_ENABLE_ALT_DRIVERS"); current != nullptr && path == current) return {};
  if (::setenv("ZE_ENABLE_ALT_DRIVERS", path.c_str(), 1) != 0)
    return internal_error(std::string("setenv ZE_ENABLE_ALT_DRIVERS: ") + std::strerror(errno));
  return {};
}

}  // namespace accord::emulation
