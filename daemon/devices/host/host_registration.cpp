#include "daemon/devices/host/host_registration.h"

#include "daemon/devices/host/host_device.h"

namespace accord::devices::host {

Result<std::unique_ptr<Device>> make_host_device(const HostDeviceOptions& options) {
  if (Status status = options.validate(); !status.ok()) return std::move(status).annotate("host device");
  return std::unique_ptr<Device>(std::make_unique<HostDevice>(options));
}

}  // namespace accord::devices::host
