// Opening a backend's GPUs through executor processes, one ExecutorDevice per GPU: what
// the composition root does for "cuda" in accordd (DeviceSettings::gpu_executor_binary
// set). Thread-safety: a free function; each call spawns its own executors.
#pragma once

#include <memory>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/backend_catalog.h"
#include "daemon/executor/executor_options.h"

namespace accord::executor {

// The executor options `settings` asks for: its binary and backend, and the backend's
// "<backend>.<key>" options forwarded.
ExecutorOptions executor_options(const devices::DeviceSettings& settings);

// Spawns executors for ordinals 0, 1, ... of `base.backend` until one says it has no
// such GPU. Errors as the backend's factory would give them: its own reason when it
// fails in executor 0 ("cuda: no driver: libcuda.so.1 not found"), "<backend>: no
// devices" when executor 0 has none, and Unsupported naming the GPU when a later one
// cannot be opened (a half-opened box would renumber GPUs, as in the cuda factory).
Result<std::vector<std::unique_ptr<devices::Device>>> open_gpu_executors(const ExecutorOptions& base);

// open_gpu_executors(executor_options(request.settings)), as a BackendFactory: what
// accordd puts in DeviceSettings::gpu_executor_factory.
Result<std::vector<std::unique_ptr<devices::Device>>> open_gpu_executors_factory(const devices::BackendRequest& request);

}  // namespace accord::executor
