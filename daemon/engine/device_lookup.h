// How prepare names a device in errors and asks whether it has a lane: shared by the
// lowering (lowering.cpp) and staged copies (staged_copy.cpp).
#pragma once

#include <algorithm>
#include <string>

#include "daemon/devices/device_registry.h"

namespace accord::engine {

// "gpu:0 (NVIDIA H200)": the device's id and its name.
inline std::string device_name(const devices::DeviceRegistry& registry, devices::DeviceIndex index) {
  const devices::DeviceInfo& info = registry.at(index).info();
  return info.id().to_string() + " (" + info.name + ")";
}

inline bool has_lane(const devices::Device& device, LaneKind lane) {
  const auto lanes = device.lanes();
  return std::find(lanes.begin(), lanes.end(), lane) != lanes.end();
}

}  // namespace accord::engine
