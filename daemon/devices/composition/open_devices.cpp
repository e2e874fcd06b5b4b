#include "daemon/devices/composition/open_devices.h"

#include <algorithm>

namespace accord::devices {

#define ACCORD_BACKEND(name) void register_##name(BackendCatalog& catalog);
#include "accord_backend_list.inc"
#undef ACCORD_BACKEND

namespace {

// Opens `backend` through GPU executors when the settings ask for them (accordd), else
// with its factory in this process.
Result<std::vector<std::unique_ptr<Device>>> open_backend(const Backend* backend, const std::string& name,
                                                          const DeviceSettings& settings, bool named) {
  if (settings.through_executors(name)) return settings.gpu_executor_factory(BackendRequest{settings, named});
  if (backend == nullptr) return unsupported_error(name + ": not built into this binary");
  return backend->factory(BackendRequest{settings, named});
}

// Adds what `name` opened; for a backend served by executors, opens it once more per
// isolation group, so each group's sessions get GPU executors of their own.
void add_opened(DeviceRegistry& registry, const std::string& name, std::vector<std::unique_ptr<Device>> devices,
                const DeviceSettings& settings, bool named) {
  for (auto& device : devices) registry.add(std::move(device));
  if (!settings.through_executors(name)) return;
  for (const std::string& group : settings.isolation_groups) {
    auto own = settings.gpu_executor_factory(BackendRequest{settings, named});
    if (!own.ok()) {
      registry.add_absent(name + " [" + group + "]", std::string(own.status().message()));
      continue;
    }
    for (auto& device : own.value()) registry.add(std::move(device), group);
  }
}

}  // namespace

BackendCatalog built_catalog() {
  BackendCatalog c;
#define ACCORD_BACKEND(name) register_##name(c);
#include "accord_backend_list.inc"
#undef ACCORD_BACKEND
  return c;
}

std::vector<std::string> built_backends() {
  std::vector<std::string> names;
  const BackendCatalog all = built_catalog();
  for (const Backend& b : all.backends()) names.push_back(b.name);
  return names;
}

Result<DeviceRegistry> open_devices(const DeviceSettings& settings) {
  const BackendCatalog all = built_catalog();
  // A backend served by executors may live only in the executor binary (a test's fake
  // GPU backend): it need not be built here.
  for (const std::string& wanted : settings.backends) {
    if (settings.through_executors(wanted)) continue;
    if (std::none_of(all.backends().begin(), all.backends().end(),
                     [&](const Backend& b) { return b.name == wanted; })) {
      std::string built;
      for (const Backend& b : all.backends()) built += (built.empty() ? "" : ", ") + b.name;
      return invalid_error("devices: no backend named '" + wanted + "' in this build (built: " + built + ")");
    }
  }
  DeviceRegistry registry;
  for (const Backend& backend : all.backends()) {
    const bool host = backend.name == "host";
    const bool named = settings.names(backend.name);
    if (!host && !settings.backends.empty() && !named) continue;
    auto devices = open_backend(&backend, backend.name, settings, named || host);
    if (!devices.ok()) {
      // The host device is the embedded default and the daemon's floor: without it
      // nothing can run, so its failure is fatal; any other backend is only absent.
      if (host) return std::move(devices).status().annotate("opening the host device");
      registry.add_absent(backend.name, std::string(devices.status().message()));
      continue;
    }
    add_opened(registry, backend.name, std::move(devices).value(), settings, named || host);
  }
  const std::string& executor_backend = settings.gpu_executor_backend;
  if (settings.through_executors(executor_backend) &&
      std::none_of(all.backends().begin(), all.backends().end(),
                   [&](const Backend& b) { return b.name == executor_backend; }) &&
      (settings.backends.empty() || settings.names(executor_backend))) {
    auto devices = open_backend(nullptr, executor_backend, settings, settings.names(executor_backend));
    if (!devices.ok()) {
      registry.add_absent(executor_backend, std::string(devices.status().message()));
    } else {
      add_opened(registry, executor_backend, std::move(devices).value(), settings, settings.names(executor_backend));
    }
  }
  if (registry.size() == 0 || registry.at(0).info().kind != DeviceKind::Host)
    return internal_error("devices: the host backend opened no device");
  return registry;
}

}  // namespace accord::devices
