// How a client names a device: its kind and its ordinal among devices of that kind
// ("host", "gpu:0", "npu:1"). Kernels and programs load onto a named device; placements
// name their GPU or NPU the same way.
#pragma once

#include <cstdint>
#include <string>

namespace accord {

enum class DeviceKind : std::uint8_t { Host, Gpu, Npu };

struct DeviceId {
  DeviceKind kind = DeviceKind::Host;
  int ordinal = 0;  // 0 for the host

  static constexpr DeviceId host() noexcept { return {DeviceKind::Host, 0}; }
  static constexpr DeviceId gpu(int ordinal) noexcept { return {DeviceKind::Gpu, ordinal}; }
  static constexpr DeviceId npu(int ordinal) noexcept { return {DeviceKind::Npu, ordinal}; }

  friend constexpr bool operator==(DeviceId, DeviceId) = default;
  // "host", "gpu:0", "npu:1".
  std::string to_string() const;
};

constexpr const char* to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::Host: return "host";
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::Npu: return "npu";
  }
  return "?";
}

}  // namespace accord
