// The set of devices one engine owns, indexed by a DeviceIndex that lanes and
// allocations record, with each device's state (present or lost, and why) and the
// backends that found no hardware. The host device is always present at index 0.
// Thread-safety: add/add_absent/set_loss_observer only while the engine is being built;
// everything else is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::devices {

enum class DeviceState : std::uint8_t { Present, Lost };

// A backend that opened no device, and why ("cuda: libcuda.so.1 not found").
struct AbsentBackend {
  std::string backend;
  std::string reason;
};

// Told once per lost device, on the thread that reported the loss (possibly a device
// thread). Must not block; the engine uses it to fail work queued on the device.
class DeviceLossObserver {
 public:
  virtual void on_device_lost(DeviceIndex device, const Status& cause) noexcept = 0;

 protected:
  ~DeviceLossObserver() = default;
};

class DeviceRegistry {
 public:
  DeviceRegistry() = default;
  // Moving re-points every device's listener at the new registry. Only while building.
  DeviceRegistry(DeviceRegistry&& other) noexcept;
  DeviceRegistry& operator=(DeviceRegistry&&) = delete;
  ~DeviceRegistry();

  // Adds `device`, attaches the registry as its listener and returns its index.
  DeviceIndex add(std::unique_ptr<Device> device);
  // Records a backend that opened no device, for ListDevices and the log.
  void add_absent(std::string backend, std::string reason);
  // The observer told about losses (the engine's scheduler). Borrowed; may be null.
  void set_loss_observer(DeviceLossObserver* observer) noexcept { observer_ = observer; }

  std::size_t size() const noexcept { return entries_.size(); }
  // Borrowed; valid while the registry lives. Precondition: index < size().
  Device& at(std::size_t index) const noexcept { return *entries_[index]->device; }
  std::span<const AbsentBackend> absent() const noexcept { return absent_; }
  // The index of the home device for `placement` (the host for HostVisible, GPU i for
  // GpuLocal(i), NPU i for NpuLocal(i) and Shared(i)), or -1 when none is here.
  int find_for(MemoryPlacement placement) const noexcept;
  // The index of the device `id` names, or -1.
  int find(DeviceId id) const noexcept;
  // "host, gpu:0 (lost); absent: cuda: libcuda.so.1 not found" for error messages.
  std::string describe() const;

  // --- device state (thread-safe) ---
  DeviceState state(std::size_t index) const noexcept {
    return entries_[index]->lost.load(std::memory_order_acquire) ? DeviceState::Lost : DeviceState::Present;
  }
  bool lost(std::size_t index) const noexcept { return state(index) == DeviceState::Lost; }
  // The cause recorded when the device was lost; empty while it is present.
  std::string loss_cause(std::size_t index) const;
  // DeviceLost "device gpu:0 (cuda:0 ...) is lost: <cause>". Precondition: lost(index).
  Status lost_error(std::size_t index) const;
  // Marks the device lost (the first cause wins) and tells the observer. Returns true
  // for the call that changed the state.
  bool mark_lost(std::size_t index, Status cause) noexcept;
  // Lost devices so far.
  std::uint64_t losses() const noexcept { return losses_.load(std::memory_order_relaxed); }

  // Calls Device::shut_down() on every device, last added first.
  void shut_down_all() noexcept;

 private:
  struct Entry final : DeviceListener {
    void on_device_lost(Status reason) noexcept override { registry->mark_lost(index, std::move(reason)); }
    DeviceRegistry* registry = nullptr;
    DeviceIndex index = 0;
    std::unique_ptr<Device> device;
    std::atomic<bool> lost{false};
    mutable std::mutex cause_mu;
    std::string cause;  // cause_mu
  };
  // Entries are heap objects so that the listener address a device holds stays valid
  // when the registry is moved into the engine.
  void attach_all() noexcept;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<AbsentBackend> absent_;
  DeviceLossObserver* observer_ = nullptr;
  std::atomic<std::uint64_t> losses_{0};
};

}  // namespace accord::devices
