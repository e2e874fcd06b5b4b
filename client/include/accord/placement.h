// Where a buffer's storage lives. Placement is always explicit: Accord never migrates
// memory behind the caller's back. Only HostVisible is mapped into the client.
#pragma once

#include <cstdint>
#include <string>

#include "accord/device_id.h"

namespace accord {

class MemoryPlacement {
 public:
  enum class Kind : std::uint8_t {
    HostVisible,  // host pages (memfd), mapped into the client; pinned for GPU DMA
    GpuLocal,     // memory of one GPU; copy it in a graph to read it on the host
    NpuLocal,     // host-mapped memory admitted for one NPU
    Shared,       // one allocation admitted to a GPU and an NPU; tracked whole
  };

  static constexpr MemoryPlacement host_visible() noexcept { return {Kind::HostVisible, 0}; }
  static constexpr MemoryPlacement gpu_local(int gpu = 0) noexcept { return {Kind::GpuLocal, gpu}; }
  static constexpr MemoryPlacement npu_local(int npu = 0) noexcept { return {Kind::NpuLocal, npu}; }
  static constexpr MemoryPlacement shared(int npu = 0) noexcept { return {Kind::Shared, npu}; }

  constexpr Kind kind() const noexcept { return kind_; }
  // The GPU or NPU ordinal; 0 for HostVisible.
  constexpr int device() const noexcept { return device_; }
  constexpr bool host_mapped() const noexcept { return kind_ != Kind::GpuLocal; }
  // Shared allocations are tracked as a whole (cache maintenance is allocation-wide).
  constexpr bool tracked_whole() const noexcept { return kind_ == Kind::Shared; }

  // The device whose memory this is: the host for HostVisible, the GPU for GpuLocal,
  // the NPU for NpuLocal and Shared (Shared is admitted to every GPU as well).
  DeviceId home() const noexcept;

  friend constexpr bool operator==(MemoryPlacement, MemoryPlacement) = default;
  std::string to_string() const;

 private:
  constexpr MemoryPlacement(Kind kind, int device) noexcept : kind_(kind), device_(device) {}
  Kind kind_;
  int device_;
};

}  // namespace accord
