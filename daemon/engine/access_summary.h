// The union of a prepared graph's declared uses as disjoint, sorted intervals, kept for
// ordering against other submissions and for host-lease checks (engine item 3).
// Immutable after build(); safe to read from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "daemon/engine/interval_frontier.h"

namespace accord::engine {

struct SummaryInterval {
  std::uint64_t allocation = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
  bool read = false;
  bool write = false;
};

class AccessSummary {
 public:
  // Sweeps `uses` per allocation into disjoint intervals annotated with read/write,
  // merging adjacent intervals with equal flags; sorted by (allocation, begin).
  static AccessSummary build(std::span<const AccessRange> uses);

  // True iff some interval of *this overlaps an interval of `other` on the same
  // allocation and either side writes. Linear merge; allocation-free.
  bool conflicts(const AccessSummary& other) const noexcept;

  std::span<const SummaryInterval> intervals() const noexcept { return intervals_; }
  bool writes_anything() const noexcept;

 private:
  std::vector<SummaryInterval> intervals_;
  bool writes_ = false;  // any interval writes: cached because lease checks ask often
};

}  // namespace accord::engine
