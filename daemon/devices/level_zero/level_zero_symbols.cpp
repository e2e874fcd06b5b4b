// Loading the Level Zero loader. RTLD_NODELETE: the loader keeps process-wide state
// (its driver list, initialised once by zeInit), and unloading and reloading it in one
// process is not something it supports; closing our handle leaves it mapped.
#include "daemon/devices/level_zero/level_zero_symbols.h"

#include <dlfcn.h>

namespace accord::devices::level_zero {

Result<std::unique_ptr<ZeSymbols>> ZeSymbols::load(const std::string& loader_path) {
  auto symbols = std::make_unique<ZeSymbols>();
  symbols->library_.reset(::dlopen(loader_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (!symbols->library_) {
    const char* why = ::dlerror();
    return unsupported_error("level_zero: " + loader_path + " not found" + (why ? std::string(" (") + why + ")" : ""));
  }
#define ACCORD_ZE_SYMBOL(name)                                                                        \
  symbols->name = reinterpret_cast<decltype(&::name)>(symbols->library_.symbol(#name));              \
  if (symbols->name == nullptr)                                                                       \
    return unsupported_error("level_zero: " + loader_path + " has no " #name " (a loader older than 1.0?)");
#define ACCORD_ZE_OPTIONAL_SYMBOL(name) \
  symbols->name = reinterpret_cast<decltype(&::name)>(symbols->library_.symbol(#name));
#include "daemon/devices/level_zero/ze_symbol_table.inc"
#undef ACCORD_ZE_SYMBOL
#undef ACCORD_ZE_OPTIONAL_SYMBOL
  return symbols;
}

}  // namespace accord::devices::level_zero
