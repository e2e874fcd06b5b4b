#include "accord/placement.h"

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

}  // namespace accord
