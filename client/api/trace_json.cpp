#include <fstream>
#include <nlohmann/json.hpp>

#include "accord/trace.h"

namespace accord {

std::string ExecutionTrace::to_json() const {
  nlohmann::json events_json = nlohmann::json::array();
  for (int lane = 0; lane < kLaneKindCount; ++lane) {
    events_json.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", lane},
                           {"args", {{"name", std::string(to_string(static_cast<LaneKind>(lane))) + " lane"}}}});
  }
  for (const TraceEvent& e : events) {
    events_json.push_back({{"name", std::string(to_string(e.lane)) + " region"},
                           {"cat", "accord"},
                           {"ph", "X"},
                           {"pid", 1},
                           {"tid", static_cast<int>(e.lane)},
                           {"ts", e.start_us},
                           {"dur", e.duration_us},
                           {"args", {{"copied_bytes", e.copied_bytes}, {"failed", e.failed}}}});
  }
  nlohmann::json doc = {
      {"traceEvents", std::move(events_json)},
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"measurement",
         "host-observed synchronized region latencies, including scheduling and driver "
         "overhead; not device timestamps"},
        {"dropped_events", dropped}}}};
  return doc.dump(1);
}

Status ExecutionTrace::write_json(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return invalid_error("cannot open trace file '" + path + "' for writing");
  out << to_json();
  out.close();
  if (!out) return invalid_error("failed writing trace file '" + path + "'");
  return Status();
}

}  // namespace accord
