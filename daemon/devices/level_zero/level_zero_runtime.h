// LevelZeroRuntime: what the NPUs of one process share: the loader (ZeSymbols), each
// driver that has an NPU with its one context and graph extension table, and the list
// of NPU (VPU) devices. Opened once by the factory; every LevelZeroDevice holds a
// shared_ptr to it, so the contexts outlive the last device. Immutable after open():
// thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "accord_ze/ze_graph_ext.h"
#include "daemon/devices/level_zero/level_zero_handles.h"
#include "daemon/devices/level_zero/level_zero_options.h"
#include "daemon/devices/level_zero/level_zero_symbols.h"

namespace accord::devices::level_zero {

struct NpuDriver {
  ze_driver_handle_t handle = nullptr;  // as the loader gives it (wrapped when 2+ drivers)
  UniqueZeContext context;
  // The extension table ("ZE_extension_graph_1_4"). It comes from the driver, not the
  // loader, so every handle passed to it goes through translate() first.
  const ze_graph_dditable_ext_t* graph = nullptr;
  std::string version;  // "level-zero driver 1.0.1, graph extension 1.4"
};

struct NpuHandle {
  std::size_t driver = 0;  // index into drivers()
  ze_device_handle_t device = nullptr;
  std::string name;  // the driver's device name
};

class LevelZeroRuntime {
 public:
  // dlopens the loader, zeInit(VPU only), and finds every VPU device whose driver has
  // the graph extension 1.4 or later, creating one context per such driver. Errors
  // (Unsupported, message starting "level_zero: "): the loader is absent, zeInit fails,
  // there is no VPU device, or no VPU driver has the graph extension.
  static Result<std::shared_ptr<LevelZeroRuntime>> open(const LevelZeroOptions& options);

  ~LevelZeroRuntime();
  LevelZeroRuntime(const LevelZeroRuntime&) = delete;
  LevelZeroRuntime& operator=(const LevelZeroRuntime&) = delete;

  const ZeSymbols& ze() const noexcept { return *symbols_; }
  std::span<const NpuDriver> drivers() const noexcept { return drivers_; }
  std::span<const NpuHandle> npus() const noexcept { return npus_; }
  const LevelZeroOptions& options() const noexcept { return options_; }

  // The driver's own handle for a loader handle, for calls that bypass the loader (the
  // graph extension). With one driver the loader does not wrap and this is the
  // identity; it is also the identity when the loader lacks zelLoaderTranslateHandle.
  // Never allocates.
  template <class Handle>
  Handle translate(zel_handle_type_t type, Handle handle) const noexcept {
    if (symbols_->zelLoaderTranslateHandle == nullptr || handle == nullptr) return handle;
    void* out = nullptr;
    if (symbols_->zelLoaderTranslateHandle(type, handle, &out) != ZE_RESULT_SUCCESS || out == nullptr) return handle;
    return static_cast<Handle>(out);
  }

 private:
  LevelZeroRuntime() = default;

  LevelZeroOptions options_;
  std::unique_ptr<ZeSymbols> symbols_;  // first member: destroyed last
  std::vector<NpuDriver> drivers_;
  std::vector<NpuHandle> npus_;
};

}  // namespace accord::devices::level_zero
