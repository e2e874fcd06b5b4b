// Named device factories, one per backend. Each backend folder has a
// `<name>_registration.cpp` that adds its factory here; the composition root
// (daemon/devices/composition) runs them all to build the devices of an engine, for
// both the embedded runtime and accordd. Not thread-safe: used while starting up.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::devices {

// Which backends to open and their options, parsed from flags or the TOML file by the
// caller (daemon/main.cpp, RuntimeOptions); backends only read them.
struct DeviceSettings {
  // Backends to open by name; empty means "auto": every built backend that finds
  // hardware. The host device is always opened, first.
  std::vector<std::string> backends;
  // Host device: whether trusted plugin kernels may be loaded.
  bool allow_plugins = true;
  // Backend options by "backend.key" (e.g. "null.devices" = "2"). Unknown keys are
  // refused by the backend that owns the prefix.
  std::map<std::string, std::string> options;
  // Isolation groups ("uid:1001", "gid:50"): accordd opens each GPU once more per group,
  // through a GPU executor of the group's own (DeviceRegistry::add's `isolation`), so
  // another tenant's fault never reaches the group's work. Needs GPU executors.
  std::vector<std::string> isolation_groups;

  bool names(std::string_view backend) const;
  // The option `backend.key`, or `fallback`.
  std::string option(std::string_view backend, std::string_view key, std::string fallback = {}) const;
};

struct BackendRequest {
  const DeviceSettings& settings;
  // True when the settings name this backend explicitly (not "auto"): a backend that is
  // opened only on request, such as null, looks at this.
  bool named = false;
};

// Opens the backend's devices. An error means the backend found no hardware or could
// not start, with the reason ("cuda: libcuda.so.1 not found"): accordd logs it and
// ListDevices shows it. An empty list means the backend has nothing to say.
using BackendFactory = Result<std::vector<std::unique_ptr<Device>>> (*)(const BackendRequest& request);

struct Backend {
  std::string name;
  BackendFactory factory = nullptr;
};

class BackendCatalog {
 public:
  void add(std::string name, BackendFactory factory) { backends_.push_back({std::move(name), factory}); }
  const std::vector<Backend>& backends() const noexcept { return backends_; }

 private:
  std::vector<Backend> backends_;
};

}  // namespace accord::devices
