#include <fstream>
#include <set>
#include <utility>
#include <nlohmann/json.hpp>

#include "accord/trace.h"

namespace accord {

std::string ExecutionTrace::to_json() const {
  // One Perfetto process per device (host 1, gpu:N 100 + N, npu:N 200 + N), one thread
  // per lane, so a GPU's Upload/Compute/Download lanes group under that GPU.
  auto pid_of = [](DeviceId device) {
    switch (device.kind) {
      case DeviceKind::Host: return 1;
      case DeviceKind::Gpu: return 100 + device.ordinal;
      case DeviceKind::Npu: return 200 + device.ordinal;
    }
    return 1;
  };
  nlohmann::json events_json = nlohmann::json::array();
  std::set<std::pair<int, int>> named_lanes;
  std::set<int> named_devices;
  auto name_lane = [&](DeviceId device, LaneKind lane) {
    const int pid = pid_of(device);
    if (named_devices.insert(pid).second)
      events_json.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", device.to_string()}}}});
    if (named_lanes.insert({pid, static_cast<int>(lane)}).second)
      events_json.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", static_cast<int>(lane)},
                             {"args", {{"name", device.to_string() + " " + std::string(to_string(lane)) + " lane"}}}});
  };
  name_lane(DeviceId::host(), LaneKind::Host);
  for (const TraceEvent& e : events) {
    name_lane(e.device, e.lane);
    events_json.push_back({{"name", e.device.to_string() + " " + std::string(to_string(e.lane)) + " region"},
                           {"cat", "accord"},
                           {"ph", "X"},
                           {"pid", pid_of(e.device)},
                           {"tid", static_cast<int>(e.lane)},
                           {"ts", e.start_us},
                           {"dur", e.duration_us},
                           {"args",
                            {{"device", e.device.to_string()},
                             {"lane", std::string(to_string(e.lane))},
                             {"copied_bytes", e.copied_bytes},
                             {"failed", e.failed}}}});
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
