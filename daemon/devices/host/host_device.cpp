#include "daemon/devices/host/host_device.h"

#include <sys/utsname.h>

#include <array>
#include <string>

#include "daemon/devices/host/host_kernels.h"
#include "daemon/devices/host/host_memory.h"
#include "daemon/devices/host/host_region.h"

namespace accord::devices::host {
namespace {

constexpr std::array kLanes{LaneKind::Upload, LaneKind::Compute, LaneKind::Download, LaneKind::Host};

std::string machine_architecture() {
  utsname name{};
  if (::uname(&name) == 0 && name.machine[0] != '\0') return name.machine;
  return "unknown";
}

}  // namespace

HostDevice::HostDevice(const HostDeviceOptions& options) : plugins_(options) {
  info_.kind = DeviceKind::Host;
  info_.ordinal = 0;
  info_.backend = "host";
  info_.name = "host";
  info_.target = machine_architecture();
}

std::span<const LaneKind> HostDevice::lanes() const noexcept { return kLanes; }

bool HostDevice::supports(MemoryPlacement placement) const noexcept {
  return placement.kind() == MemoryPlacement::Kind::HostVisible;
}

Result<std::unique_ptr<DeviceMemory>> HostDevice::allocate(const AllocationRequest& request) {
  if (!supports(request.placement))
    return unsupported_error("the host device holds only HostVisible memory; " + request.placement.to_string() +
                             " was requested");
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<HostMemory> memory, HostMemory::create(request.bytes));
  return std::unique_ptr<DeviceMemory>(std::move(memory));
}

Result<std::unique_ptr<LoadedCode>> HostDevice::load(const CodeImage& image, const KernelContract& contract) {
  switch (image.kind) {
    case CodeImage::Kind::Builtin: {
      ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<HostCode> code, load_builtin_kernel(image.name, contract));
      return std::unique_ptr<LoadedCode>(std::move(code));
    }
    case CodeImage::Kind::Plugin: {
      ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<HostCode> code, plugins_.load(image.plugin_path, image.name, contract));
      return std::unique_ptr<LoadedCode>(std::move(code));
    }
  }
  return unsupported_error("the host device cannot load code image kind " +
                           std::to_string(static_cast<int>(image.kind)));
}

Result<std::unique_ptr<AdmittedMemory>> HostDevice::admit(const DeviceMemory& memory, const DeviceInfo& home) {
  struct HostView final : AdmittedMemory {
    explicit HostView(std::byte* address) : address_(address) {}
    std::uint64_t device_address() const noexcept override { return reinterpret_cast<std::uint64_t>(address_); }
    std::byte* address_;
  };
  if (memory.host_address() == nullptr)
    return unsupported_error("the host CPU cannot reach memory of " + home.id().to_string() + " (" + home.name +
                             "): it is not host mapped");
  return std::unique_ptr<AdmittedMemory>(std::make_unique<HostView>(memory.host_address()));
}

Result<std::unique_ptr<NativeRegion>> HostDevice::lower(const RegionRequest& request) {
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<HostRegion> region, HostRegion::lower(request.operations));
  return std::unique_ptr<NativeRegion>(std::move(region));
}

void HostDevice::launch(NativeRegion& region, const RegionWaits&, CompletionSink& sink) noexcept {
  // A region from another device is a broken invariant in the engine. dynamic_cast
  // does not allocate, so checking it keeps launch allocation-free.
  auto* host_region = dynamic_cast<HostRegion*>(&region);
  if (host_region == nullptr) {
    sink.on_error(internal_error("the host device was asked to launch another device's region"));
    return;
  }
  host_region->run(sink);  // may destroy *this: no member access below
}

}  // namespace accord::devices::host
