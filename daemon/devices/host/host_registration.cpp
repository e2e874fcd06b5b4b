// The host backend's entry in the catalog, and the factory tests use directly.
#include "daemon/devices/host/host_registration.h"

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/host/host_device.h"

namespace accord::devices {
namespace host {

Result<std::unique_ptr<Device>> make_host_device(const HostDeviceOptions& options) {
  if (Status status = options.validate(); !status.ok()) return std::move(status).annotate("host device");
  return std::unique_ptr<Device>(std::make_unique<HostDevice>(options));
}

namespace {

Result<std::vector<std::unique_ptr<Device>>> open_host(const BackendRequest& request) {
  HostDeviceOptions options;
  options.allow_plugins = request.settings.allow_plugins;
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, make_host_device(options));
  std::vector<std::unique_ptr<Device>> devices;
  devices.push_back(std::move(device));
  return devices;
}

}  // namespace
}  // namespace host

void register_host(BackendCatalog& catalog) { catalog.add("host", &host::open_host); }

}  // namespace accord::devices
