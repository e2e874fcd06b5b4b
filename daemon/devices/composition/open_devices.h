// The composition root of the device layer: runs every backend's factory (in
// backends.cmake order, the host first) and returns the registry an engine takes,
// with each backend that found no hardware recorded with its reason. The embedded
// runtime and accordd both build their devices here.
#pragma once

#include <string>
#include <vector>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/device_registry.h"

namespace accord::devices {

// Opens the devices `settings` asks for. Fails only when the host device cannot be
// opened, or when `settings.backends` names a backend this build does not have
// (Invalid, listing the ones it has). Backends that find no hardware are recorded in
// DeviceRegistry::absent(). With `settings.gpu_executor_binary` set, the
// `gpu_executor_backend` backend ("cuda") is opened through one executor process per GPU
// (daemon/executor) instead of in this process. Thread-safe (builds a new registry each
// call).
Result<DeviceRegistry> open_devices(const DeviceSettings& settings);

// The catalog of every backend built into this binary (what a GPU executor opens its
// backend from). Not thread-safe to mutate; each call builds a new one.
BackendCatalog built_catalog();

// Names of the backends built into this binary, in opening order.
std::vector<std::string> built_backends();

}  // namespace accord::devices
