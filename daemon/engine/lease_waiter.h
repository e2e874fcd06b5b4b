// LeaseWaiter: a host lease that must wait for conflicting device work, answered later
// instead of blocking a thread (engine item 8). accordd's ring poller serves every
// session from a few threads, so it cannot wait in Scheduler::acquire_lease; it parks a
// waiter here and answers the client when the scheduler tells it. Owned by the caller,
// which keeps the allocation alive until told or cancelled; see
// Scheduler::acquire_lease_or_wait.
#pragma once

#include <cstdint>

#include "accord/status.h"

namespace accord::engine {

class Allocation;
enum class LeaseMode : std::uint8_t;

class LeaseWaiter {
 public:
  // Told once, on the thread that ended the conflicting work (a worker or a device
  // thread), after the session's scheduling lock was released: it must not block. OK means the
  // lease is now held and the waiter's owner must release it like any other; an error
  // (Busy for a conflicting lease that came meanwhile, DeviceLost for a poisoned
  // allocation or a lost device) means nothing is held.
  virtual void on_lease(Status outcome) noexcept = 0;

  // The allocation's session lock, while queued: what is waited for, and the queue's link.
  Allocation* waited_allocation = nullptr;
  LeaseMode waited_mode{};
  LeaseWaiter* next_waiter = nullptr;
  // Written under the session's scheduling lock when the waiter is dequeued, read by the teller.
  Status waited_outcome;

 protected:
  ~LeaseWaiter() = default;
};

}  // namespace accord::engine
