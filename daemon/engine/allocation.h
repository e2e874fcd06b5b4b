// A tracked allocation: memory on its home device, its admissions to other devices, and
// the state the engine keeps about it (host leases, pending device users, poison).
// Shared ownership: buffers, views in prepared graphs and quarantine all retain it; the
// memory is freed by the last release. Thread-safety: admission_for() is thread-safe;
// host_state() and poison() need its session's scheduling lock; the rest is immutable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "accord/placement.h"
#include "daemon/devices/device.h"
#include "daemon/engine/ref.h"

namespace accord::engine {

class Session;

class Allocation final : public RefCounted {
 public:
  // `bytes` is what the client asked for (the extent views are checked against);
  // `memory->bytes()` is what the device granted, and what the budget was charged.
  Allocation(Ref<Session> session, std::uint64_t id, devices::DeviceIndex home, std::uint32_t home_generation,
             MemoryPlacement placement, std::unique_ptr<devices::DeviceMemory> memory, std::size_t bytes) noexcept;

  std::uint64_t id() const noexcept { return id_; }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t charged_bytes() const noexcept { return charged_; }
  MemoryPlacement placement() const noexcept { return placement_; }
  // The device whose memory this is.
  devices::DeviceIndex home() const noexcept { return home_; }
  // The home's generation when the memory was made: after the home restarts
  // (DeviceRegistry::recover) the memory is gone, and every use is DeviceLost.
  std::uint32_t home_generation() const noexcept { return home_generation_; }
  Session& session() const noexcept { return *session_; }
  const devices::DeviceMemory& memory() const noexcept { return *memory_; }
  // Host address of byte 0, or nullptr when not host mapped.
  std::byte* host_address() const noexcept { return memory_->host_address(); }

  // The view of this memory that `device` (at `index`, not the home, in its generation
  // `generation`) uses, admitting it there on first use; later calls in the same
  // generation return the same view, and a restarted device gets a new one. Unsupported when `device`
  // cannot reach the memory. Thread-safe; called at prepare, never on submit.
  Result<const devices::AdmittedMemory*> admission_for(devices::DeviceIndex index, std::uint32_t generation,
                                                      devices::Device& device, const devices::DeviceInfo& home_info);

  // Set once, by the scheduler, when a graph using this allocation fails natively.
  bool poisoned() const noexcept { return poisoned_.load(std::memory_order_acquire); }
  // Precondition: poisoned().
  const std::string& poison_message() const noexcept { return poison_message_; }

  // Host-lease and pending-work bookkeeping. Guarded by the session's scheduling lock; the lease
  // always reserves the whole allocation (engine item 8).
  struct HostState {
    std::uint32_t read_leases = 0;
    bool write_lease = false;
    std::uint32_t pending_readers = 0;  // pending submissions that only read it
    std::uint32_t pending_writers = 0;  // pending submissions that write it
  };
  HostState& host_state() noexcept { return host_; }

  // Called under the session's scheduling lock. The first message wins.
  void poison(std::string message) noexcept;

 private:
  ~Allocation() override;

  Ref<Session> session_;
  std::uint64_t id_;
  devices::DeviceIndex home_;
  std::uint32_t home_generation_;
  MemoryPlacement placement_;
  std::unique_ptr<devices::DeviceMemory> memory_;
  std::size_t bytes_;
  std::size_t charged_;
  std::mutex admissions_mu_;
  // Few devices admit any one allocation: a short vector beats a map. Destroyed before
  // memory_ (the destructor clears it first).
  // Views of a device's earlier generations stay until the allocation goes: a stale
  // prepared graph may still point at one.
  struct Admitted {
    devices::DeviceIndex device;
    std::uint32_t generation;
    std::unique_ptr<devices::AdmittedMemory> view;
  };
  std::vector<Admitted> admissions_;
  HostState host_;
  std::string poison_message_;
  std::atomic<bool> poisoned_{false};
};

}  // namespace accord::engine
