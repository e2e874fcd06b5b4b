// The set of devices one engine owns, indexed by a DeviceIndex that lanes and
// allocations record, with each device's state (present or lost, and why) and the
// backends that found no hardware. The host device is always present at index 0.
// Thread-safety: add/add_absent/set_loss_observer only while the engine is being built;
// everything else is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::devices {

enum class DeviceState : std::uint8_t { Present, Lost };

// A backend that opened no device, and why ("cuda: libcuda.so.1 not found").
struct AbsentBackend {
  std::string backend;
  std::string reason;
};

// One loss or recovery of a device, as ListDevices and the log show it.
struct DeviceEvent {
  enum class Kind : std::uint8_t { Lost, Recovered };
  Kind kind = Kind::Lost;
  std::chrono::system_clock::time_point when{};
  std::string what;  // the cause of a loss, or how the device came back
};

// Told once per loss of a device, on the thread that reported the loss (possibly a
// device thread). Must not block; the engine uses it to fail work queued on the device.
class DeviceLossObserver {
 public:
  virtual void on_device_lost(DeviceIndex device, const Status& cause) noexcept = 0;
  // The device serves new work again (Device::report_recovered()); what was made on it
  // before the loss stays lost. Default: nothing to do.
  virtual void on_device_recovered(DeviceIndex device, const std::string& how) noexcept {
    static_cast<void>(device);
    static_cast<void>(how);
  }

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

  // Adds `device`, attaches the registry as its listener and returns its index. A device
  // with an `isolation` group (e.g. "uid:1001") is found only by sessions of that group,
  // which find it before the shared device of the same id (a GPU executor of their own).
  DeviceIndex add(std::unique_ptr<Device> device, std::string isolation = {});
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
  // `isolation` is the session's group: its own device of that id comes first.
  int find_for(MemoryPlacement placement, std::string_view isolation = {}) const noexcept;
  // The index of the device `id` names for a session of group `isolation` (empty: the
  // shared devices only), or -1.
  int find(DeviceId id, std::string_view isolation = {}) const noexcept;
  // The isolation group the device was added with; empty for a shared device.
  const std::string& isolation(std::size_t index) const noexcept { return entries_[index]->isolation; }
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

  // --- recovery (thread-safe) ---
  // A device that comes back after a loss starts a new generation: memory, code and
  // regions record the generation they were made in, and stay lost once it has passed.
  std::uint32_t generation(std::size_t index) const noexcept {
    return entries_[index]->generation.load(std::memory_order_acquire);
  }
  // OK while the device is present and still in `generation`; DeviceLost otherwise,
  // naming the device and the loss that ended that generation.
  Status check_generation(std::size_t index, std::uint32_t generation) const;
  // Marks a lost device present again in a new generation and tells the observer.
  // Returns false (nothing changes) when the device was not lost.
  bool recover(std::size_t index, std::string how) noexcept;
  std::uint64_t recoveries() const noexcept { return recoveries_.load(std::memory_order_relaxed); }
  // Times the device at `index` came back (history() keeps only the last kHistory events).
  std::uint64_t recoveries(std::size_t index) const noexcept {
    return entries_[index]->recoveries.load(std::memory_order_relaxed);
  }
  // The device's last losses and recoveries, oldest first (at most kHistory).
  static constexpr std::size_t kHistory = 32;
  std::vector<DeviceEvent> history(std::size_t index) const;

  // Calls Device::shut_down() on every device, last added first.
  void shut_down_all() noexcept;

 private:
  struct Entry final : DeviceListener {
    void on_device_lost(Status reason) noexcept override { registry->mark_lost(index, std::move(reason)); }
    void on_device_recovered(std::string how) noexcept override { registry->recover(index, std::move(how)); }
    DeviceRegistry* registry = nullptr;
    DeviceIndex index = 0;
    std::unique_ptr<Device> device;
    std::string isolation;
    std::atomic<bool> lost{false};
    std::atomic<std::uint32_t> generation{0};
    std::atomic<std::uint64_t> recoveries{0};
    mutable std::mutex cause_mu;
    std::string cause;                // cause_mu: of the current (or last) loss
    std::vector<DeviceEvent> events;  // cause_mu: at most kHistory
  };
  void record_event_locked(Entry& e, DeviceEvent::Kind kind, std::string what);
  // Entries are heap objects so that the listener address a device holds stays valid
  // when the registry is moved into the engine.
  void attach_all() noexcept;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<AbsentBackend> absent_;
  DeviceLossObserver* observer_ = nullptr;
  std::atomic<std::uint64_t> losses_{0};
  std::atomic<std::uint64_t> recoveries_{0};
};

}  // namespace accord::devices
