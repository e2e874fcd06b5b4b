// Helpers shared by the level_zero backend tests: the process-wide environment (two
// emulator drivers), opening the backend through its catalog entry, a sink that records
// its outcome and the thread it ran on, and loading an NPU program with the contract its
// arguments imply. Test code only.
#pragma once

#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/device.h"

namespace accord::devices {
void register_level_zero(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::level_zero::testing {

// Sets ZE_ENABLE_ALT_DRIVERS before the process's first zeInit: the loader reads it there.
inline void use_two_emulators() {
  static const bool done = [] {
    return ::setenv("ZE_ENABLE_ALT_DRIVERS", ACCORD_NPU_EMULATOR_PATH "," ACCORD_NPU_EMULATOR_COPY_PATH, 1) == 0;
  }();
  REQUIRE(done);
}

inline Result<std::vector<std::unique_ptr<Device>>> open_backend(DeviceSettings settings = {}) {
  use_two_emulators();
  BackendCatalog catalog;
  register_level_zero(catalog);
  REQUIRE(catalog.backends().size() == 1);
  return catalog.backends()[0].factory(BackendRequest{settings, true});
}

inline std::vector<std::unique_ptr<Device>> open_npus() {
  auto devices = open_backend();
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 2);
  return std::move(devices).value();
}

// Records its one outcome and the thread that reported it; wait() blocks the test.
class WaitingSink final : public CompletionSink {
 public:
  void on_done() noexcept override { finish(0, Status()); }
  void on_error(Status error) noexcept override { finish(1, std::move(error)); }
  void on_cancelled() noexcept override { finish(2, Status()); }

  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return calls_ > 0; });
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  void reset() {
    std::lock_guard lock(mutex_);
    calls_ = 0;
    outcome = -1;
  }

  int outcome = -1;  // 0 done, 1 error, 2 cancelled
  Status status;
  std::thread::id thread;

 private:
  // Notifies under the lock: the test may destroy the sink as soon as wait_for() sees
  // the call, which it cannot before the lock is released.
  void finish(int what, Status s) {
    std::lock_guard lock(mutex_);
    ++calls_;
    outcome = what;
    status = std::move(s);
    thread = std::this_thread::get_id();
    changed_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  int calls_ = 0;
};

inline CodeImage program_image(const Device& device, const std::string& name, const std::string& text) {
  CodeImage image;
  image.name = name;
  image.device = device.info().id();
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  image.image.assign(p, p + text.size());
  return image;
}

// The contract a program with these arguments has: inputs Read, outputs Write, f32.
inline KernelContract contract_for(const std::vector<std::size_t>& elements, const std::vector<bool>& output) {
  KernelContract contract;
  for (std::size_t i = 0; i < elements.size(); ++i)
    contract.bindings.push_back({elements[i] * sizeof(float), 4, output[i] ? Access::Write : Access::Read, "f32"});
  return contract;
}

inline OperationBinding bind(const DeviceMemory& memory, Access access) {
  OperationBinding b;
  b.memory = &memory;
  b.address = memory.device_address();
  b.length = memory.bytes();
  b.access = access;
  return b;
}

}  // namespace accord::devices::level_zero::testing
