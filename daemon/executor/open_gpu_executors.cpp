// One executor per GPU, opened in order: the first says whether the backend works at
// all here, and each asks the driver only about its own ordinal.
#include "daemon/executor/open_gpu_executors.h"

#include "daemon/executor/executor_device.h"

namespace accord::executor {
namespace {

// More GPUs than any box has: a backend that ignores the ordinal option would otherwise
// make this loop spawn forever.
constexpr int kMaxGpus = 64;

}  // namespace

ExecutorOptions executor_options(const devices::DeviceSettings& settings) {
  ExecutorOptions options;
  options.binary = settings.gpu_executor_binary;
  options.backend = settings.gpu_executor_backend;
  const std::string prefix = options.backend + ".";
  for (const auto& [key, value] : settings.options)
    if (key.starts_with(prefix)) options.device_options[key] = value;
  return options;
}

Result<std::vector<std::unique_ptr<devices::Device>>> open_gpu_executors(const ExecutorOptions& base) {
  std::vector<std::unique_ptr<devices::Device>> devices;
  for (int ordinal = 0; ordinal < kMaxGpus; ++ordinal) {
    ExecutorOptions options = base;
    options.ordinal = ordinal;
    auto opened = ExecutorDevice::open(std::move(options));
    if (!opened.ok()) {
      if (ordinal == 0) return std::move(opened).status();
      return unsupported_error(base.backend + ": gpu:" + std::to_string(ordinal) + ": " +
                               std::string(opened.status().message()));
    }
    if (!*opened) break;
    devices.push_back(std::move(opened).value());
  }
  if (devices.empty()) return unsupported_error(base.backend + ": no devices");
  return devices;
}

Result<std::vector<std::unique_ptr<devices::Device>>> open_gpu_executors_factory(const devices::BackendRequest& request) {
  return open_gpu_executors(executor_options(request.settings));
}

}  // namespace accord::executor
