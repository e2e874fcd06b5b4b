#include "daemon/devices/backend_catalog.h"

#include <algorithm>

namespace accord::devices {

bool DeviceSettings::names(std::string_view backend) const {
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

std::string DeviceSettings::option(std::string_view backend, std::string_view key, std::string fallback) const {
  const auto it = options.find(std::string(backend) + "." + std::string(key));
  return it == options.end() ? std::move(fallback) : it->second;
}

}  // namespace accord::devices
