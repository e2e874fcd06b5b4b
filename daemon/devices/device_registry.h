// The set of devices one engine owns, indexed by a small ordinal that lanes and
// allocations record. The host device is always present at index 0.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::devices {

class DeviceRegistry {
 public:
  // Adds `device` and returns its index. Not thread-safe: called while the engine is
  // being built, before any other use.
  std::uint8_t add(std::unique_ptr<Device> device);

  std::size_t size() const noexcept { return devices_.size(); }
  // Borrowed; valid while the registry lives. Precondition: index < size().
  Device& at(std::size_t index) const noexcept { return *devices_[index]; }
  // The index of the first device that can hold `placement`, or -1.
  int find_for(MemoryPlacement placement) const noexcept;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace accord::devices
