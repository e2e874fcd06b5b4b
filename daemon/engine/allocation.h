// A tracked allocation: device memory plus the state the engine keeps about it (host
// leases, pending device users, poison). Shared ownership: buffers, views in prepared
// graphs and quarantine all retain it; the memory is freed by the last release.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "accord/placement.h"
#include "daemon/devices/device.h"
#include "daemon/engine/ref.h"

namespace accord::engine {

class Session;

class Allocation final : public RefCounted {
 public:
  Allocation(Ref<Session> session, std::uint64_t id, std::uint8_t device, MemoryPlacement placement,
             std::unique_ptr<devices::DeviceMemory> memory, std::size_t bytes) noexcept;

  std::uint64_t id() const noexcept { return id_; }
  std::size_t bytes() const noexcept { return bytes_; }
  MemoryPlacement placement() const noexcept { return placement_; }
  std::uint8_t device_index() const noexcept { return device_; }
  Session& session() const noexcept { return *session_; }
  const devices::DeviceMemory& memory() const noexcept { return *memory_; }
  // Host address of byte 0, or nullptr when not host mapped.
  std::byte* host_address() const noexcept { return memory_->host_address(); }

  // Set once, by the scheduler, when a graph using this allocation fails natively.
  bool poisoned() const noexcept { return poisoned_.load(std::memory_order_acquire); }
  // Precondition: poisoned().
  const std::string& poison_message() const noexcept { return poison_message_; }

  // Host-lease and pending-work bookkeeping. Guarded by the scheduler lock; the lease
  // always reserves the whole allocation (engine item 8).
  struct HostState {
    std::uint32_t read_leases = 0;
    bool write_lease = false;
    std::uint32_t pending_readers = 0;  // pending submissions that only read it
    std::uint32_t pending_writers = 0;  // pending submissions that write it
  };
  HostState& host_state() noexcept { return host_; }

  // Called under the scheduler lock. The first message wins.
  void poison(std::string message) noexcept;

 private:
  ~Allocation() override;

  Ref<Session> session_;
  std::uint64_t id_;
  std::uint8_t device_;
  MemoryPlacement placement_;
  std::unique_ptr<devices::DeviceMemory> memory_;
  std::size_t bytes_;
  HostState host_;
  std::string poison_message_;
  std::atomic<bool> poisoned_{false};
};

}  // namespace accord::engine
