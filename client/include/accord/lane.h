// Scheduling lanes. A lane runs at most one region of a session at a time; different
// lanes overlap. Memory hazards apply across every lane. The numeric ids are the ones
// traces use (seed: Upload 0, Compute 1, Download 2, NPU 3, host 4).
#pragma once

#include <cstdint>
#include <string_view>

namespace accord {

enum class GpuLane : std::uint8_t { Upload = 0, Compute = 1, Download = 2 };

enum class LaneKind : std::uint8_t { Upload = 0, Compute = 1, Download = 2, Npu = 3, Host = 4 };
inline constexpr int kLaneKindCount = 5;

constexpr LaneKind to_lane_kind(GpuLane lane) noexcept { return static_cast<LaneKind>(lane); }

constexpr std::string_view to_string(LaneKind lane) noexcept {
  switch (lane) {
    case LaneKind::Upload: return "upload";
    case LaneKind::Compute: return "compute";
    case LaneKind::Download: return "download";
    case LaneKind::Npu: return "npu";
    case LaneKind::Host: return "host";
  }
  return "?";
}

}  // namespace accord
