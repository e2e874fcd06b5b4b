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

 private:
  static constexpr OpIndex kNoOp = ~OpIndex{0};
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};

  // Readers since the last write, as immutable singly linked lists in one pool: a split
  // segment shares its list with its other half instead of copying it.
  struct ReaderNode {
    OpIndex op;
    std::uint32_t next;   // kNil ends the list
    std::uint32_t stamp;  // epoch_ of the last record() that walked this node
  };
  struct Segment {
    std::size_t begin;
    std::size_t end;
    OpIndex writer;         // kNoOp: never written
    std::uint32_t readers;  // head in reader_nodes_, kNil: none
  };
  // Open-addressing map from allocation identity to an index into segment_lists_.
  struct Slot {
    std::uint64_t allocation;
    std::uint32_t list;  // kNil: empty slot
  };

  std::vector<Segment>& segments_of(std::uint64_t allocation);
  void grow_slots();
  void apply(OpIndex op, bool write, Segment& piece, std::vector<OpIndex>& deps);
  void emit(const Segment& piece);

  std::vector<Slot> slots_;
  std::uint32_t lists_used_ = 0;
  std::vector<std::vector<Segment>> segment_lists_;  // capacity kept across clear()
  std::vector<ReaderNode> reader_nodes_;
  std::vector<Segment> scratch_;  // replacement segments of the record in progress
  std::uint32_t epoch_ = 0;
  // The last read's (old readers head -> new head), so neighbouring pieces that shared
  // a list before a read still share one after it and can merge.
  std::uint32_t memo_old_ = kNil;
  std::uint32_t memo_new_ = kNil;
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
