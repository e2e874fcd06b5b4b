// The null backend's entry in the catalog. It opens devices only when the settings name
// it, so a production accordd never shows a device that does nothing; option
// "null.devices" (default 1) says how many, with GPU ordinals 0, 1, ...
#include <charconv>
#include <string>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/null/null_device.h"

namespace accord::devices {
namespace null {
namespace {

Result<std::vector<std::unique_ptr<Device>>> open_null(const BackendRequest& request) {
  std::vector<std::unique_ptr<Device>> devices;
  if (!request.named) return devices;
  const std::string count_text = request.settings.option("null", "devices", "1");
  int count = 0;
  const auto [end, error] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (error != std::errc() || end != count_text.data() + count_text.size() || count < 0 || count > 64)
    return invalid_error("null: option null.devices = '" + count_text + "' is not a count in 0..64");
  for (int i = 0; i < count; ++i) {
    NullDeviceOptions options;
    options.ordinal = i;
    ACCORD_RETURN_IF_ERROR(options.validate());
    devices.push_back(std::make_unique<NullDevice>(options));
  }
  return devices;
}

}  // namespace
}  // namespace null

void register_null(BackendCatalog& catalog) { catalog.add("null", &null::open_null); }

}  // namespace accord::devices
