#include "daemon/devices/device_registry.h"

namespace accord::devices {

std::uint8_t DeviceRegistry::add(std::unique_ptr<Device> device) {
  devices_.push_back(std::move(device));
  return static_cast<std::uint8_t>(devices_.size() - 1);
}

int DeviceRegistry::find_for(MemoryPlacement placement) const noexcept {
  for (std::size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i]->supports(placement)) return static_cast<int>(i);
  return -1;
}

}  // namespace accord::devices
