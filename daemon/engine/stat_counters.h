// The 13 cumulative counters of Statistics as relaxed atomics, kept once per engine and
// once per session. Updates are single relaxed adds: cheap on the completion path.
#pragma once

#include <atomic>
#include <cstdint>

#include "accord/lane.h"
#include "accord/statistics.h"

namespace accord::engine {

class StatCounters {
 public:
  void add_allocation(std::uint64_t bytes, bool import) noexcept;
  void remove_live(std::uint64_t bytes) noexcept;
  void add_copy(LaneKind lane, std::uint64_t bytes) noexcept;
  void add_submission() noexcept { submissions_.fetch_add(1, std::memory_order_relaxed); }
  void add_completion() noexcept { completions_.fetch_add(1, std::memory_order_relaxed); }
  void add_native_graph() noexcept { native_graphs_.fetch_add(1, std::memory_order_relaxed); }
  Statistics snapshot() const noexcept;

 private:
  std::atomic<std::uint64_t> native_graphs_{0}, copy_streams_{0}, allocations_{0}, imports_{0},
      submissions_{0}, completions_{0}, copied_{0}, uploaded_{0}, downloaded_{0},
      device_copied_{0}, cache_maintenance_{0}, live_{0}, peak_{0};
};

}  // namespace accord::engine
