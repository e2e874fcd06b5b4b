// HostDevice: the host CPU as a Device (ARCHITECTURE.md, devices: host). Always present.
// Memory is sealed memfd pages (HostVisible only); code is the built-in kernels or
// trusted plugin kernels; a region is a task list that launch() runs to completion on
// the calling thread (STYLE.md rule 3: the inline, 0-worker mode that keeps tests
// deterministic). A worker pool, where there is one, belongs to the engine's lanes.
#pragma once

#include <memory>
#include <span>

#include "daemon/devices/device.h"
#include "daemon/devices/host/host_options.h"
#include "daemon/devices/host/host_plugin.h"

namespace accord::devices::host {

class HostDevice final : public Device {
 public:
  // Builds the device from `options`, which must have passed validate();
  // make_host_device() does both. Does not load any plugin yet.
  explicit HostDevice(const HostDeviceOptions& options);

  // kind Host, ordinal 0, name "host", target the machine's architecture ("x86_64").
  const DeviceInfo& info() const noexcept override { return info_; }
  // Upload, Compute, Download and Host: every lane runs on the CPU.
  std::span<const LaneKind> lanes() const noexcept override;
  // True for HostVisible only.
  bool supports(MemoryPlacement placement) const noexcept override;

  // Zero-initialised sealed memfd pages (HostMemory). Invalid for 0 bytes; Unsupported
  // for any placement other than HostVisible; Busy when out of memory. Thread-safe.
  Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) override;

  // Builtin: a kernel from host_kernels.h (Unsupported for an unknown name). Plugin:
  // through HostPluginLoader (see its errors). Invalid when `contract` does not match
  // the kernel. Blocks on dlopen for a plugin's first load. Thread-safe.
  Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image, const KernelContract& contract) override;

  // Any memory with a host address (an NPU's Shared or NpuLocal pages) is visible to
  // the CPU as it is; anything else is Unsupported, naming `home`. Thread-safe.
  Result<std::unique_ptr<AdmittedMemory>> admit(const DeviceMemory& memory, const DeviceInfo& home) override;

  // A HostRegion task list; see HostRegion::lower() for the checks. The edges are not
  // needed: a host region runs its operations in recording order. Thread-safe.
  Result<std::unique_ptr<NativeRegion>> lower(const RegionRequest& request) override;

  // Runs `region` (a HostRegion from this device's lower()) on the calling thread and
  // calls `sink` before returning. `waits` is ignored: regions launch synchronously, so
  // every same-device predecessor has finished before a successor can be launched.
  void launch(NativeRegion& region, const RegionWaits& waits, CompletionSink& sink) noexcept override;
  bool launches_synchronously() const noexcept override { return true; }

 private:
  DeviceInfo info_;
  HostPluginLoader plugins_;
};

}  // namespace accord::devices::host
