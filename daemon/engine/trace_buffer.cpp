#include "daemon/engine/trace_buffer.h"

namespace accord::engine {

Status TraceBuffer::start(std::size_t capacity) {
  if (capacity == 0) return invalid_error("trace event capacity must be nonzero");
  if (active_) return busy_error("a trace capture is already running");
  ring_.assign(capacity, TraceEvent{});
  next_ = count_ = 0;
  dropped_ = 0;
  origin_ = Clock::now();
  active_ = true;
  return Status();
}

std::optional<ExecutionTrace> TraceBuffer::finish() {
  if (!active_) return std::nullopt;
  active_ = false;
  ExecutionTrace trace;
  trace.dropped = dropped_;
  trace.events.reserve(count_);
  const std::size_t first = (next_ + ring_.size() - count_) % ring_.size();
  for (std::size_t i = 0; i < count_; ++i) trace.events.push_back(ring_[(first + i) % ring_.size()]);
  ring_.clear();
  ring_.shrink_to_fit();
  return trace;
}

void TraceBuffer::record(Clock::time_point start, Clock::time_point end, DeviceId device, LaneKind lane,
                         std::uint64_t copied_bytes, bool failed) noexcept {
  if (!active_) return;
  using us = std::chrono::duration<double, std::micro>;
  TraceEvent& e = ring_[next_];
  e.start_us = us(start - origin_).count();
  e.duration_us = us(end - start).count();
  e.device = device;
  e.lane = lane;
  e.copied_bytes = copied_bytes;
  e.failed = failed;
  next_ = (next_ + 1) % ring_.size();
  if (count_ == ring_.size()) ++dropped_;
  else ++count_;
}

}  // namespace accord::engine
