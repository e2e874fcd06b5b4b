// How many of the ring poller's threads serve rings (RingPoller, sized_by_work): as few as
// keep each of them busy about half the time at most. Why: a poller with nothing to take
// spins before it sleeps, and on a box whose tenants are GPU work (the pollers only
// forward submissions) eight spinning pollers took the CPUs sixteen clients needed:
// four served 29-32% more graphs per second on the H200, while host graphs, which the
// pollers run themselves, wanted all eight (tests/bench/RESULTS.md, session 22).
// A pure function, so that the policy is tested apart from threads and clocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace accord::wire {

// The number of threads that should serve rings next, given that `active` of them did for
// the last `window_ns` and were busy `busy_ns` between them (time spent taking entries
// and answering, not spinning). Grows at once when each was busy more than 60% of the
// time (to one more than would each be busy half of it); shrinks by one per window while the
// others would still be busy less than 35% of it, so that a burst or one quiet window
// does not make it swing. Never below `floor` (the threads the rings need: at most
// kRingsPerThread each) or 1, never above `most`.
inline std::size_t pollers_wanted(std::int64_t busy_ns, std::int64_t window_ns, std::size_t active, std::size_t floor,
                                  std::size_t most) noexcept {
  const std::size_t lowest = std::max<std::size_t>(floor, 1);
  if (most < lowest) return lowest;
  active = std::clamp(active, lowest, most);
  if (window_ns <= 0) return active;
  const double load = static_cast<double>(std::max<std::int64_t>(busy_ns, 0)) / static_cast<double>(window_ns);
  if (load > 0.6 * static_cast<double>(active)) {
    const auto grown = static_cast<std::size_t>(load / 0.5) + 1;
    return std::clamp(grown, active, most);
  }
  if (active > lowest && load < 0.35 * static_cast<double>(active - 1)) return active - 1;
  return active;
}

}  // namespace accord::wire
