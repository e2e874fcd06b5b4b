// Cumulative counters of one runtime (embedded) or one daemon session. Host-observed,
// relaxed snapshots: reading them is not a barrier against in-flight work.
#pragma once

#include <cstdint>

namespace accord {

struct Statistics {
  std::uint64_t native_graphs_prepared = 0;  // native regions with kernels or fills built by prepare
  std::uint64_t copy_streams_created = 0;    // lazily created direct-copy streams
  std::uint64_t allocations = 0;             // successful tracked allocations
  std::uint64_t imports = 0;                 // Shared (dual-device) allocations created
  std::uint64_t submissions = 0;             // accepted submissions
  std::uint64_t completions = 0;             // terminal submissions, failed and cancelled included
  std::uint64_t copied_bytes = 0;            // explicit copy bytes executed by regions
  std::uint64_t uploaded_bytes = 0;          // copy bytes on the Upload lane
  std::uint64_t downloaded_bytes = 0;        // copy bytes on the Download lane
  std::uint64_t device_copied_bytes = 0;     // copy bytes on the Compute lane
  std::uint64_t cache_maintenance_bytes = 0; // extents passed to cross-engine cache maintenance
  std::uint64_t live_bytes = 0;              // bytes of tracked allocations still alive
  std::uint64_t peak_bytes = 0;              // highest live_bytes observed
  // Devices marked lost since the engine started (a sticky fault, the watchdog, a driver
  // reset). Not one of the seed's 13 counters. Over the daemon transport it is the
  // daemon's count, since a loss touches every session.
  std::uint64_t devices_lost = 0;
};

}  // namespace accord
