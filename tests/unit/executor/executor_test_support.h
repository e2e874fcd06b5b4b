// Shared pieces of the executor tests: options that run fake_gpu_executor with short
// timeouts, a sink that records its one report, a listener that records losses and
// recoveries, and helpers that lower regions by hand (as the engine would).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/devices/common/memfd_pages.h"
#include "daemon/devices/backend_catalog.h"
#include "daemon/executor/executor_device.h"
#include "daemon/executor/open_gpu_executors.h"

namespace accord::testing {

using namespace std::chrono_literals;

inline executor::ExecutorOptions fake_options(int ordinal = 0) {
  executor::ExecutorOptions options;
  options.binary = FAKE_GPU_EXECUTOR_PATH;
  options.backend = "fake";
  options.ordinal = ordinal;
  options.request_timeout = 5s;
  options.hello_timeout = 5s;
  options.exit_grace = 1s;
  options.max_restarts = 10;
  options.restart_window = 60s;
  options.backoff_initial = 50ms;
  options.backoff_max = 200ms;
  return options;
}

// Composition-root settings that open the fake backend through fake_gpu_executor, one
// executor per GPU, beside the host device. Named: on a machine with a GPU, "auto" would
// also open the real CUDA backend.
inline devices::DeviceSettings fake_executor_settings() {
  devices::DeviceSettings settings;
  settings.backends = {"host", "fake"};
  settings.gpu_executor_binary = FAKE_GPU_EXECUTOR_PATH;
  settings.gpu_executor_backend = "fake";
  settings.gpu_executor_factory = &executor::open_gpu_executors_factory;
  return settings;
}

inline std::unique_ptr<executor::ExecutorDevice> open_fake(executor::ExecutorOptions options = fake_options()) {
  auto opened = executor::ExecutorDevice::open(std::move(options));
  INFO(opened.status().to_string());
  REQUIRE(opened.ok());
  REQUIRE(*opened != nullptr);
  return std::move(opened).value();
}

// Waits up to `limit` for `done()`, polling every millisecond.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Records how a launch ended; counts reports so "exactly once" can be checked.
class RecordingSink final : public devices::CompletionSink {
 public:
  void on_done() noexcept override { record(0, Status()); }
  void on_error(Status status) noexcept override { record(1, std::move(status)); }
  void on_cancelled() noexcept override { record(2, Status()); }

  bool wait(std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return reports_ > 0; });
  }
  int reports() const {
    std::lock_guard lock(mu_);
    return reports_;
  }
  bool done() const {
    std::lock_guard lock(mu_);
    return reports_ > 0 && outcome_ == 0;
  }
  Status error() const {
    std::lock_guard lock(mu_);
    return status_;
  }
  void reset() {
    std::lock_guard lock(mu_);
    reports_ = 0;
    outcome_ = -1;
    status_ = Status();
  }

 private:
  // Notifies under the lock: a waiter may destroy the sink as soon as wait() returns,
  // and the report must be over by then.
  void record(int outcome, Status status) {
    std::lock_guard lock(mu_);
    ++reports_;
    outcome_ = outcome;
    status_ = std::move(status);
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int reports_ = 0;
  int outcome_ = -1;
  Status status_;
};

class RecordingListener final : public devices::DeviceListener {
 public:
  void on_device_lost(Status cause) noexcept override {
    std::lock_guard lock(mu_);
    events_.push_back("lost: " + std::string(cause.message()));
    ++lost_;
  }
  void on_device_recovered(std::string how) noexcept override {
    std::lock_guard lock(mu_);
    events_.push_back("recovered: " + how);
    ++recovered_;
  }
  int lost() const {
    std::lock_guard lock(mu_);
    return lost_;
  }
  int recovered() const {
    std::lock_guard lock(mu_);
    return recovered_;
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> events_;
  int lost_ = 0;
  int recovered_ = 0;
};

inline std::unique_ptr<devices::LoadedCode> load_kernel(devices::Device& device, const std::string& name,
                                                        std::size_t bindings = 0, std::uint32_t ms = 0) {
  devices::CodeImage image;
  image.name = name;
  image.device = device.info().id();
  KernelContract contract;
  for (std::size_t i = 0; i < bindings; ++i)
    contract.bindings.push_back({4, 4, i == 0 ? Access::Write : Access::Read, "u32"});
  if (name == "fake.sleep_ms") append_constant(contract.constants, ms);
  auto code = device.load(image, contract);
  INFO(code.status().to_string());
  REQUIRE(code.ok());
  return std::move(code).value();
}

// One kernel without bindings in a region of `slots` slots.
inline std::unique_ptr<devices::NativeRegion> lower_kernel(devices::Device& device, const devices::LoadedCode& code,
                                                           std::uint32_t slots = 1) {
  devices::Operation op;
  op.kind = devices::OpKind::Kernel;
  op.lane = LaneKind::Compute;
  op.code = &code;
  devices::RegionRequest request = devices::RegionRequest::of(std::span(&op, 1));
  request.slots = slots;
  auto region = device.lower(request);
  INFO(region.status().to_string());
  REQUIRE(region.ok());
  return std::move(region).value();
}

inline devices::OperationBinding bind(const devices::DeviceMemory& memory, std::size_t length, Access access,
                                      const devices::AdmittedMemory* admission = nullptr) {
  devices::OperationBinding b;
  b.memory = &memory;
  b.admission = admission;
  b.address = admission ? admission->device_address() : memory.device_address();
  b.length = length;
  b.access = access;
  return b;
}

inline bool process_exists(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

inline std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

inline devices::DeviceInfo host_info() {
  devices::DeviceInfo info;
  info.backend = "host";
  info.name = "host";
  return info;
}

}  // namespace accord::testing
