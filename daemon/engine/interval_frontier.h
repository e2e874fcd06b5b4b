// Per-allocation record of who touched which bytes last, used at prepare time to find
// the earlier operations a new access must follow (ARCHITECTURE.md engine items 1-2).
// Segments are disjoint byte ranges holding the last writer and the readers since it,
// so repeated writes chain instead of fanning in. Owner thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "accord/access.h"

namespace accord::engine {

using OpIndex = std::uint32_t;

// One declared use: bytes [begin, end) of `allocation` (an identity, only compared).
struct AccessRange {
  std::uint64_t allocation = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
  Access access = Access::Read;
};

class IntervalFrontier {
 public:
  // Records `use` by `op` and appends to `deps` every earlier operation it must follow:
  // read-after-write, write-after-read and write-after-write order; read-after-read
  // does not. Self-edges are dropped and empty ranges ignored. `deps` may receive
  // duplicates; infer_dependencies() removes them. O(log segments + segments overlapped).
  void record(OpIndex op, const AccessRange& use, std::vector<OpIndex>& deps);
  void clear();
  // ... (private state chosen by the implementation)
};

// Dependencies of every operation, in compressed rows: the sorted, unique predecessors
// of op i are deps[offsets[i] .. offsets[i+1]).
struct DependencyLists {
  std::vector<std::uint32_t> offsets;  // ops + 1 entries
  std::vector<OpIndex> deps;
  std::span<const OpIndex> of(OpIndex op) const {
    return {deps.data() + offsets[op], deps.data() + offsets[op + 1]};
  }
};

// Runs a fresh frontier over `ops` in order; ops[i] lists the uses of operation i.
DependencyLists infer_dependencies(std::span<const std::span<const AccessRange>> ops);

}  // namespace accord::engine
