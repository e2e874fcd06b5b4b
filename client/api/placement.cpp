#include "accord/placement.h"

#include "accord/device_id.h"

namespace accord {

std::string MemoryPlacement::to_string() const {
  switch (kind_) {
    case Kind::HostVisible: return "HostVisible";
    case Kind::GpuLocal: return "GpuLocal(gpu " + std::to_string(device_) + ")";
    case Kind::NpuLocal: return "NpuLocal(npu " + std::to_string(device_) + ")";
    case Kind::Shared: return "Shared(npu " + std::to_string(device_) + ")";
  }
  return "?";
}

DeviceId MemoryPlacement::home() const noexcept {
  switch (kind_) {
    case Kind::HostVisible: return DeviceId::host();
    case Kind::GpuLocal: return DeviceId::gpu(device_);
    case Kind::NpuLocal:
    case Kind::Shared: return DeviceId::npu(device_);
  }
  return DeviceId::host();
}

std::string DeviceId::to_string() const {
  if (kind == DeviceKind::Host) return "host";
  return std::string(accord::to_string(kind)) + ":" + std::to_string(ordinal);
}

}  // namespace accord
