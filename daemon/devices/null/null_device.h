// NullDevice: the skeleton every backend starts from (IREE's hal/drivers/null). It has
// the lanes of a GPU and implements every Device method in the simplest way that keeps
// the interface's promises: no memory, no code, regions that complete at once.
// Thread-safety: every member is thread-safe (the device has no mutable state).
#pragma once

#include <memory>
#include <span>

#include "daemon/devices/device.h"

namespace accord::devices::null {

struct NullDeviceOptions {
  int ordinal = 0;  // the GPU ordinal it claims ("gpu:0")
  Status validate() const {
    if (ordinal < 0 || ordinal > 1023) return invalid_error("null device ordinal must be in 0..1023");
    return Status();
  }
};

class NullDevice final : public Device {
 public:
  explicit NullDevice(const NullDeviceOptions& options);

  // kind Gpu, the configured ordinal, backend and name "null", target "none".
  const DeviceInfo& info() const noexcept override { return info_; }
  // Upload, Compute and Download, as a GPU has.
  std::span<const LaneKind> lanes() const noexcept override;
  // False: the null device is the home of no memory.
  bool supports(MemoryPlacement placement) const noexcept override;
  bool launches_synchronously() const noexcept override { return true; }

  // Unsupported, naming the device and the placement.
  Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) override;
  // Unsupported, naming the device and the home of `memory`.
  Result<std::unique_ptr<AdmittedMemory>> admit(const DeviceMemory& memory, const DeviceInfo& home) override;
  // Unsupported, naming the kernel.
  Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image, const KernelContract& contract) override;
  // An empty region; Invalid when an operation asks for a lane this device lacks.
  Result<std::unique_ptr<NativeRegion>> lower(const RegionRequest& request) override;
  // Completes at once, on the calling thread.
  void launch(NativeRegion& region, const RegionWaits& waits, CompletionSink& sink) noexcept override;

 private:
  DeviceInfo info_;
};

}  // namespace accord::devices::null
