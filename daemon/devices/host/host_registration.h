// The factory the daemon and the embedded runtime use to open the host device. Options
// are parsed elsewhere (daemon/main.cpp); here they are validated and the device built.
#pragma once

#include <memory>

#include "daemon/devices/device.h"
#include "daemon/devices/host/host_options.h"

namespace accord::devices::host {

// Validates `options` and returns a HostDevice. Invalid when the options are not
// (HostDeviceOptions::validate()). Thread-safe.
Result<std::unique_ptr<Device>> make_host_device(const HostDeviceOptions& options = {});

}  // namespace accord::devices::host
