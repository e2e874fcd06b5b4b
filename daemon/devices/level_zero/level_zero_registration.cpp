// The level_zero backend's entry in the catalog: parses "level_zero.*" options, opens
// the loader and makes one device per NPU, ordinals 0, 1, ... in driver order.
#include <charconv>
#include <string>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/level_zero/level_zero_device.h"

namespace accord::devices {
namespace level_zero {
namespace {

Result<LevelZeroOptions> parse_options(const DeviceSettings& settings) {
  LevelZeroOptions options;
  for (const auto& [key, value] : settings.options) {
    if (key.rfind("level_zero.", 0) != 0) continue;
    if (key == "level_zero.loader") {
      options.loader_path = value;
    } else if (key == "level_zero.poll_us") {
      std::uint32_t us = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), us);
      if (ec != std::errc() || end != value.data() + value.size())
        return invalid_error("level_zero: option level_zero.poll_us = '" + value + "' is not a number");
      options.poll_us = us;
    } else if (key == "level_zero.waiter_blocks") {
      if (value != "0" && value != "1")
        return invalid_error("level_zero: option level_zero.waiter_blocks = '" + value + "' is not 0 or 1");
      options.waiter_blocks = value == "1";
    } else {
      return invalid_error("level_zero: unknown option '" + key +
                           "' (known: level_zero.loader, level_zero.poll_us, level_zero.waiter_blocks)");
    }
  }
  if (Status status = options.validate(); !status.ok()) return std::move(status).annotate("level_zero");
  return options;
}

Result<std::vector<std::unique_ptr<Device>>> open_level_zero(const BackendRequest& request) {
  ACCORD_ASSIGN_OR_RETURN(const LevelZeroOptions options, parse_options(request.settings));
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<LevelZeroRuntime> runtime, LevelZeroRuntime::open(options));
  std::vector<std::unique_ptr<Device>> devices;
  for (std::size_t i = 0; i < runtime->npus().size(); ++i) {
    ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<LevelZeroDevice> device,
                            LevelZeroDevice::create(runtime, i, static_cast<int>(i)));
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace
}  // namespace level_zero

void register_level_zero(BackendCatalog& catalog) { catalog.add("level_zero", &level_zero::open_level_zero); }

}  // namespace accord::devices
