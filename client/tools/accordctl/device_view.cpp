#include "client/tools/accordctl/device_view.h"

#include <cstdio>
#include <vector>

#include "client/tools/accordctl/proto_text.h"

namespace accord::ctl {
namespace {

bool absent(const v1::Device& device) { return device.state() == "absent"; }

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  return text;
}

// "139.8 GiB (139.2 GiB free)", "139.8 GiB" when free is unknown, "-" for no memory of its own.
std::string memory_text(const v1::Device& device) {
  if (device.memory_bytes() == 0) return "-";
  if (device.memory_free() == 0) return gib(device.memory_bytes());
  return gib(device.memory_bytes()) + " (" + gib(device.memory_free()) + " free)";
}

// Why a device is lost or absent; for a present device that came back after losses,
// how often and the last cause, so a restarted GPU executor is visible at a glance.
std::string reason_text(const v1::Device& device) {
  if (device.state() != "present" || device.recoveries() == 0) return device.reason();
  std::string last_loss;
  for (const v1::DeviceEvent& e : device.history())
    if (e.kind() == "lost") last_loss = e.what();
  return "recovered " + std::to_string(device.recoveries()) + "x; last loss: " + last_loss;
}

}  // namespace

std::string device_id(const v1::Device& device) {
  if (absent(device) || device.kind().empty()) return "-";
  if (device.kind() == "host") return "host";
  std::string id = device.kind() + ":" + std::to_string(device.ordinal());
  if (!device.isolation().empty()) id += " [" + device.isolation() + "]";
  return id;
}

Table devices_table(const v1::ListDevicesResponse& response) {
  Table table({{"INDEX", Align::Right},
               {"ID"},
               {"BACKEND"},
               {"NAME"},
               {"TARGET"},
               {"MEMORY"},
               {"STATE"},
               {"REASON"}});
  for (const v1::Device& device : response.devices()) {
    table.add_row({absent(device) ? "-" : std::to_string(device.index()), device_id(device),
                   or_dash(device.backend()), or_dash(device.name()), or_dash(device.target()),
                   memory_text(device), or_dash(device.state()), reason_text(device)});
  }
  return table;
}

namespace {

nlohmann::ordered_json history_json(const v1::Device& device) {
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const v1::DeviceEvent& e : device.history())
    history.push_back({{"kind", e.kind()}, {"unix_ms", e.unix_ms()}, {"what", e.what()}});
  return history;
}

}  // namespace

nlohmann::ordered_json devices_json(const v1::ListDevicesResponse& response) {
  using nlohmann::ordered_json;
  ordered_json devices = ordered_json::array();
  for (const v1::Device& device : response.devices()) {
    std::vector<std::string> lanes;
    for (int lane : device.lanes()) lanes.push_back(lane_name(static_cast<v1::Lane>(lane)));
    std::vector<std::string> placements;
    for (int kind : device.placements()) placements.push_back(placement_name(static_cast<v1::PlacementKind>(kind)));
    const bool none = absent(device);
    devices.push_back({{"index", none ? ordered_json() : ordered_json(device.index())},
                       {"id", none ? ordered_json() : ordered_json(device_id(device))},
                       {"kind", none ? ordered_json() : ordered_json(device.kind())},
                       {"ordinal", none ? ordered_json() : ordered_json(device.ordinal())},
                       {"backend", device.backend()},
                       {"name", device.name()},
                       {"target", device.target()},
                       {"memory_bytes", device.memory_bytes()},
                       {"memory_free", device.memory_free()},
                       {"state", device.state()},
                       {"reason", device.reason()},
                       {"lanes", lanes},
                       {"placements", placements},
                       {"isolation", device.isolation()},
                       {"recoveries", device.recoveries()},
                       {"history", history_json(device)}});
  }
  return {{"devices", devices}};
}

}  // namespace accord::ctl
