// A bounded, host-observed record of executed regions: when each started and how long
// it took as seen by the worker that ran it, including scheduling and driver overhead.
// These are never device timestamps. Exports to Chrome/Perfetto trace JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accord/device_id.h"
#include "accord/lane.h"
#include "accord/status.h"

namespace accord {

struct TraceEvent {
  double start_us = 0;       // relative to the start of the capture
  double duration_us = 0;
  DeviceId device = DeviceId::host();  // the device whose lane ran the region
  LaneKind lane = LaneKind::Host;
  std::uint64_t copied_bytes = 0;
  bool failed = false;
};

struct ExecutionTrace {
  std::vector<TraceEvent> events;  // in completion order
  std::uint64_t dropped = 0;       // oldest events evicted when capacity was exceeded

  // Chrome trace event format ("X" events, one process per device named "host",
  // "gpu:0", ..., tid = lane, args.device the device), loadable in Perfetto, with a
  // `measurement` label saying these are host-observed region latencies.
  std::string to_json() const;
  // Writes to_json() to `path`. Invalid if the file cannot be written.
  Status write_json(const std::string& path) const;
};

}  // namespace accord
