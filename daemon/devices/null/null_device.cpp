#include "daemon/devices/null/null_device.h"

#include <algorithm>
#include <array>
#include <string>

namespace accord::devices::null {
namespace {

constexpr std::array kLanes{LaneKind::Upload, LaneKind::Compute, LaneKind::Download};

struct NullRegion final : NativeRegion {};

}  // namespace

NullDevice::NullDevice(const NullDeviceOptions& options) {
  info_.kind = DeviceKind::Gpu;
  info_.ordinal = options.ordinal;
  info_.backend = "null";
  info_.name = "null";
  info_.target = "none";
}

std::span<const LaneKind> NullDevice::lanes() const noexcept { return kLanes; }

bool NullDevice::supports(MemoryPlacement) const noexcept { return false; }

Result<std::unique_ptr<DeviceMemory>> NullDevice::allocate(const AllocationRequest& request) {
  return unsupported_error("the null device " + info_.id().to_string() + " holds no memory (" +
                           request.placement.to_string() + " was requested)");
}

Result<std::unique_ptr<AdmittedMemory>> NullDevice::admit(const DeviceMemory&, const DeviceInfo& home) {
  return unsupported_error("the null device " + info_.id().to_string() + " cannot reach memory of " +
                           home.id().to_string() + " (" + home.name + ")");
}

Result<std::unique_ptr<LoadedCode>> NullDevice::load(const CodeImage& image, const KernelContract&) {
  return unsupported_error("the null device " + info_.id().to_string() + " runs no code ('" + image.name +
                           "' was requested)");
}

Result<std::unique_ptr<NativeRegion>> NullDevice::lower(const RegionRequest& request) {
  for (std::size_t i = 0; i < request.operations.size(); ++i) {
    const LaneKind lane = request.operations[i].lane;
    if (std::find(kLanes.begin(), kLanes.end(), lane) == kLanes.end())
      return invalid_error("operation " + std::to_string(i) + ": the null device has no " +
                           std::string(to_string(lane)) + " lane");
  }
  return std::unique_ptr<NativeRegion>(std::make_unique<NullRegion>());
}

void NullDevice::launch(NativeRegion&, const RegionWaits&, CompletionSink& sink) noexcept {
  sink.on_done();  // may destroy the region's owner: no access below
}

}  // namespace accord::devices::null
