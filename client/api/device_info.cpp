// Out-of-line parts of device_info.h: the device list in messages, and the structural
// check of a GPU kernel image (the backend checks target and parameters at load).
#include "accord/device_info.h"

namespace accord {

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string present;
  std::string absent;
  for (const DeviceInfo& d : devices) {
    if (d.state == DeviceState::Absent) {
      // Backends already start their reason with their name ("cuda: no driver ...").
      const bool named = d.reason.rfind(d.backend + ":", 0) == 0;
      absent += (absent.empty() ? "" : "; ") + (named ? d.reason : d.backend + ": " + d.reason);
      continue;
    }
    present += (present.empty() ? "" : ", ") + d.id.to_string();
    if (d.state == DeviceState::Lost) present += " (lost)";
  }
  return present + (absent.empty() ? "" : "; absent: " + absent);
}

Status GpuKernelImage::validate() const {
  if (image.empty()) return invalid_error("GPU kernel image is empty (expected PTX, a cubin or a fatbin)");
  if (entry.empty()) return invalid_error("GPU kernel image has no entry symbol");
  for (int i = 0; i < 3; ++i)
    if (grid[static_cast<std::size_t>(i)] == 0 || block[static_cast<std::size_t>(i)] == 0)
      return invalid_error("GPU kernel '" + entry + "': grid and block dimensions must be >= 1 (grid " +
                           std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
                           ", block " + std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" +
                           std::to_string(block[2]) + ")");
  return Status();
}

}  // namespace accord
