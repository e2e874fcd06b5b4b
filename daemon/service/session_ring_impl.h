// SessionRing's internals shared by session_ring.cpp (submissions) and
// session_ring_leases.cpp (leases). Folder-private: included by nothing outside
// daemon/service/session_ring*.cpp.
#pragma once

#include <cstdint>

#include "daemon/service/session_ring.h"

namespace accord::service {

// A CompletionEntry's status: 0 OK, else 1 + ErrorKind (ring_layout.h).
inline std::uint32_t ring_status_code(const Status& status) noexcept {
  return status.ok() ? 0 : 1 + static_cast<std::uint32_t>(status.kind());
}

// One lease the client waits for (kLeaseWait) while device work conflicts with it:
// queued in the engine until granted or refused, then answered from the engine thread
// that settled it. Preallocated at create(), so serving a lease never allocates here.
struct SessionRing::LeaseSlot final : engine::LeaseWaiter {
  SessionRing* ring = nullptr;
  // Set by the poller before the slot is queued; read by on_lease (ticket_mu_ orders
  // the slot's reuse, the engine's queue orders its first telling).
  std::uint64_t tag = 0;
  std::uint64_t buffer = 0;
  bool write = false;
  engine::Ref<engine::Allocation> allocation;  // kept alive while queued
  bool queued = false;                         // ticket_mu_: in the engine's queue or being told

  void on_lease(Status outcome) noexcept override;
};

}  // namespace accord::service
