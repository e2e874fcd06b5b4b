#include "daemon/devices/composition/open_devices.h"

#include <algorithm>

namespace accord::devices {

#define ACCORD_BACKEND(name) void register_##name(BackendCatalog& catalog);
#include "accord_backend_list.inc"
#undef ACCORD_BACKEND

namespace {

BackendCatalog catalog() {
  BackendCatalog c;
#define ACCORD_BACKEND(name) register_##name(c);
#include "accord_backend_list.inc"
#undef ACCORD_BACKEND
  return c;
}

}  // namespace

std::vector<std::string> built_backends() {
  std::vector<std::string> names;
  const BackendCatalog all = catalog();
  for (const Backend& b : all.backends()) names.push_back(b.name);
  return names;
}

Result<DeviceRegistry> open_devices(const DeviceSettings& settings) {
  const BackendCatalog all = catalog();
  for (const std::string& wanted : settings.backends) {
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
    auto devices = backend.factory(BackendRequest{settings, named || host});
    if (!devices.ok()) {
      // The host device is the embedded default and the daemon's floor: without it
      // nothing can run, so its failure is fatal; any other backend is only absent.
      if (host) return std::move(devices).status().annotate("opening the host device");
      registry.add_absent(backend.name, std::string(devices.status().message()));
      continue;
    }
    for (auto& device : devices.value()) registry.add(std::move(device));
  }
  if (registry.size() == 0 || registry.at(0).info().kind != DeviceKind::Host)
    return internal_error("devices: the host backend opened no device");
  return registry;
}

}  // namespace accord::devices
