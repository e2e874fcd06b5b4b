// Host leases against device work (engine item 8, seed 3.6): conflicting live leases
// are Busy at once; conflicting pending device work is waited for, or Busy for try_.
// A lease is registered under the scheduler lock, so no submission can slip in.
#include <string>

#include "daemon/engine/scheduler.h"

namespace accord::engine {

Status Scheduler::acquire_lease(Allocation& allocation, LeaseMode mode, bool block) {
  if (!allocation.placement().host_mapped())
    return unsupported_error("allocation " + std::to_string(allocation.id()) + " (" +
                             allocation.placement().to_string() +
                             ") is not host mapped; copy it to HostVisible storage in a graph");
  const bool write = mode == LeaseMode::Write;
  std::unique_lock lock(mu_);
  for (;;) {
    if (devices_.lost(allocation.home()))
      return devices_.lost_error(allocation.home()).annotate("allocation " + std::to_string(allocation.id()));
    if (allocation.poisoned())
      return device_lost_error("allocation " + std::to_string(allocation.id()) +
                               " is poisoned: " + allocation.poison_message());
    Allocation::HostState& h = allocation.host_state();
    if (h.write_lease || (write && h.read_leases > 0))
      return busy_error("allocation " + std::to_string(allocation.id()) +
                        " has a conflicting host mapping");
    const bool device_conflict =
        write ? (h.pending_readers + h.pending_writers) > 0 : h.pending_writers > 0;
    if (!device_conflict) {
      if (write) h.write_lease = true;
      else ++h.read_leases;
      return Status();
    }
    if (!block)
      return busy_error("allocation " + std::to_string(allocation.id()) + " is in device use");
    if (inline_mode_) {
      help_once(lock);
    } else {
      ++lease_waiters_;
      host_cv_.wait(lock);
      --lease_waiters_;
    }
  }
}

void Scheduler::release_lease(Allocation& allocation, LeaseMode mode) noexcept {
  std::lock_guard lock(mu_);
  Allocation::HostState& h = allocation.host_state();
  // Host pages are coherent for the host device, so publishing a WriteGuard's bytes
  // needs no cache maintenance here; a device backend with its own caches hooks in here.
  if (mode == LeaseMode::Write) h.write_lease = false;
  else if (h.read_leases > 0) --h.read_leases;
}

}  // namespace accord::engine
