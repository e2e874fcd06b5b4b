// The bounded ring behind ExecutionTrace: preallocated when a capture starts, so the
// completion path records an event without allocating. Guarded by its session's
// scheduling lock (SessionSchedule::mu).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "accord/status.h"
#include "accord/trace.h"

namespace accord::engine {

using Clock = std::chrono::steady_clock;

class TraceBuffer {
 public:
  // Invalid for 0; Busy when a capture is already running.
  Status start(std::size_t capacity);
  // Stops the capture; empty if none was running.
  std::optional<ExecutionTrace> finish();
  bool active() const noexcept { return active_; }
  // Records one region; drops the oldest event when full. No-op when inactive.
  void record(Clock::time_point start, Clock::time_point end, DeviceId device, LaneKind lane,
              std::uint64_t copied_bytes, bool failed) noexcept;

 private:
  bool active_ = false;
  Clock::time_point origin_;
  std::vector<TraceEvent> ring_;
  std::size_t next_ = 0;   // index the next event goes to
  std::size_t count_ = 0;  // events held (<= capacity)
  std::uint64_t dropped_ = 0;
};

}  // namespace accord::engine
