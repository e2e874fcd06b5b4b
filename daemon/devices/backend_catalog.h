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

struct BackendRequest;

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
  // GPU executors (daemon/executor): when `gpu_executor_binary` and
  // `gpu_executor_factory` are both set, the `gpu_executor_backend` backend is opened by
  // that factory (accordd: executor::open_gpu_executors_factory, one child process per
  // GPU running the binary, "/proc/self/exe") instead of in this process. The factory is
  // injected by accordd's main so that the device layer, and the embedded runtime that
  // links it, never depend on the executor. Unset (the default): in process.
  std::string gpu_executor_binary;
  std::string gpu_executor_backend = "cuda";
  Result<std::vector<std::unique_ptr<Device>>> (*gpu_executor_factory)(const BackendRequest&) = nullptr;

  bool names(std::string_view backend) const;
  // Whether `backend` is opened through GPU executors (see gpu_executor_binary).
  bool through_executors(std::string_view backend) const {
    return gpu_executor_factory != nullptr && !gpu_executor_binary.empty() && backend == gpu_executor_backend;
  }
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
