// ZeSymbols: the Level Zero loader opened with dlopen and the entry points the backend
// calls, as a struct of function pointers (ze_symbol_table.inc). The backend never links
// the loader, so accordd starts and runs its other devices where Level Zero is absent.
// Immutable once loaded: thread-safe to read.
#pragma once

#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>

#include <memory>
#include <string>

#include "client/api/unique_dl_handle.h"
#include "daemon/devices/device.h"

namespace accord::devices::level_zero {

struct ZeSymbols {
#define ACCORD_ZE_SYMBOL(name) decltype(&::name) name = nullptr;
#define ACCORD_ZE_OPTIONAL_SYMBOL(name) decltype(&::name) name = nullptr;
#include "daemon/devices/level_zero/ze_symbol_table.inc"
#undef ACCORD_ZE_SYMBOL
#undef ACCORD_ZE_OPTIONAL_SYMBOL

  // Opens `loader_path` (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) and resolves every
  // symbol. Unsupported "level_zero: <path> not found" when the library is absent;
  // Unsupported naming the symbol when a required one is missing.
  static Result<std::unique_ptr<ZeSymbols>> load(const std::string& loader_path);

 private:
  UniqueDlHandle library_;
};

}  // namespace accord::devices::level_zero
