// The interval frontier: hrx-execution-semantics.md 3.2, ARCHITECTURE.md engine items 1-2.
#include "daemon/engine/interval_frontier.h"

#include <algorithm>
#include <functional>

namespace accord::engine {
namespace {

// Fibonacci hashing: allocation identities are often small or strided integers, and
// the multiply spreads them over the high bits we keep.
std::size_t slot_of(std::uint64_t allocation, std::size_t mask) {
  return static_cast<std::size_t>((allocation * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

// Index of the first segment whose end is past `offset`. Branch-free (Khuong and
// Morin's layout paper): tiled bindings land at random positions, and a mispredicted
// branch per halving cost more than the rest of record() on such workloads.
template <typename Segment>
std::size_t first_ending_after(const std::vector<Segment>& segs, std::size_t offset) {
  if (segs.empty()) return 0;
  const Segment* base = segs.data();
  std::size_t n = segs.size();
  while (n > 1) {
    const std::size_t half = n / 2;
    base = base[half].end <= offset ? base + half : base;
    n -= half;
  }
  return static_cast<std::size_t>(base - segs.data()) + (base->end <= offset ? 1 : 0);
}

bool same_state(const auto& a, const auto& b) {
  return a.writer == b.writer && a.readers == b.readers;
}

}  // namespace

std::vector<IntervalFrontier::Segment>& IntervalFrontier::segments_of(
    std::uint64_t allocation) {
  if (slots_.empty()) grow_slots();
  for (;;) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = slot_of(allocation, mask);; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.list != kNil && slot.allocation == allocation) {
        return segment_lists_[slot.list];
      }
      if (slot.list != kNil) continue;
      // Keep the load at most one half so probes stay short.
      if (2 * (lists_used_ + 1) > slots_.size()) break;
      slot = {allocation, lists_used_};
      // Lists beyond lists_used_ are leftovers from before clear(): reuse their capacity.
      if (lists_used_ == segment_lists_.size()) segment_lists_.emplace_back();
      return segment_lists_[lists_used_++];
    }
    grow_slots();
  }
}

void IntervalFrontier::grow_slots() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<std::size_t>(16, 2 * old.size()), Slot{0, kNil});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.list == kNil) continue;
    std::size_t i = slot_of(slot.allocation, mask);
    while (slots_[i].list != kNil) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

inline void IntervalFrontier::apply(OpIndex op, bool write, Segment& piece,
                                    std::vector<OpIndex>& deps) {
  // RAW and WAW: the last writer orders every use; a self-edge is dropped because one
  // operation may reach the same bytes through two bindings.
  if (piece.writer != kNoOp && piece.writer != op) deps.push_back(piece.writer);
  if (write) {
    // WAR. Lists share tails, so a node stamped by this record() has had its whole tail
    // walked already; stopping there keeps a write over many split pieces linear.
    for (std::uint32_t n = piece.readers; n != kNil;) {
      ReaderNode& node = reader_nodes_[n];
      if (node.stamp == epoch_) break;
      node.stamp = epoch_;
      if (node.op != op) deps.push_back(node.op);
      n = node.next;
    }
    piece.writer = op;
    piece.readers = kNil;
    return;
  }
  // RAR creates no edge: only remember the reader for a later writer.
  if (piece.readers != kNil && reader_nodes_[piece.readers].op == op) return;
  if (piece.readers != memo_old_ || memo_new_ == kNil) {
    memo_old_ = piece.readers;
    memo_new_ = static_cast<std::uint32_t>(reader_nodes_.size());
    reader_nodes_.push_back({op, piece.readers, 0});
  }
  piece.readers = memo_new_;
}

inline void IntervalFrontier::emit(const Segment& piece) {
  // Opportunistic merge: neighbours in identical state (typically after a write over
  // several pieces) collapse, so whole-buffer traffic keeps one segment per allocation.
  if (!scratch_.empty() && scratch_.back().end == piece.begin &&
      same_state(scratch_.back(), piece)) {
    scratch_.back().end = piece.end;
    return;
  }
  scratch_.push_back(piece);
}

void IntervalFrontier::record(OpIndex op, const AccessRange& use,
                              std::vector<OpIndex>& deps) {
  if (use.begin >= use.end) return;
  std::vector<Segment>& segs = segments_of(use.allocation);
  const bool write = writes(use.access);
  if (++epoch_ == 0) {
    // Wrapped: forget old stamps so none can match the new epoch by accident.
    for (ReaderNode& node : reader_nodes_) node.stamp = 0;
    epoch_ = 1;
  }
  memo_old_ = kNil;
  memo_new_ = kNil;

  // Segments are disjoint and sorted, so their ends are sorted too: [lo, hi) are the
  // ones overlapping [begin, end). The end of that run is found by walking it, since
  // every segment in it is visited below anyway; a second binary search costs more.
  std::size_t lo = first_ending_after(segs, use.begin);
  std::size_t hi = lo;
  while (hi < segs.size() && segs[hi].begin < use.end) ++hi;

  // Fast path: the use is exactly one existing segment, as with whole-buffer or fixed
  // tile bindings. Update it in place and only merge when a neighbour now matches.
  if (hi == lo + 1 && segs[lo].begin == use.begin && segs[lo].end == use.end) {
    apply(op, write, segs[lo], deps);
    if (hi < segs.size() && segs[hi].begin == use.end && same_state(segs[hi], segs[lo])) {
      segs[lo].end = segs[hi].end;
      segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(hi));
    }
    if (lo > 0 && segs[lo - 1].end == use.begin && same_state(segs[lo - 1], segs[lo])) {
      segs[lo - 1].end = segs[lo].end;
      segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(lo));
    }
    return;
  }

  scratch_.clear();
  // A touching left neighbour joins the rewritten window so it can merge with its edge.
  const std::size_t window_begin = lo < hi ? std::min(segs[lo].begin, use.begin) : use.begin;
  std::size_t i = lo;
  if (lo > 0 && segs[lo - 1].end == window_begin) emit(segs[--lo]);

  std::size_t cursor = use.begin;
  for (; i < hi; ++i) {
    Segment s = segs[i];
    if (s.begin < use.begin) {
      emit({s.begin, use.begin, s.writer, s.readers});  // left remainder, untouched
      s.begin = use.begin;
    }
    if (cursor < s.begin) {
      Segment gap{cursor, s.begin, kNoOp, kNil};
      apply(op, write, gap, deps);
      emit(gap);
    }
    Segment covered{s.begin, std::min(s.end, use.end), s.writer, s.readers};
    apply(op, write, covered, deps);
    emit(covered);
    cursor = covered.end;
    if (s.end > use.end) emit({use.end, s.end, s.writer, s.readers});  // right remainder
  }
  if (cursor < use.end) {
    Segment gap{cursor, use.end, kNoOp, kNil};
    apply(op, write, gap, deps);
    emit(gap);
  }
  // Likewise a touching right neighbour.
  if (hi < segs.size() && segs[hi].begin == scratch_.back().end) emit(segs[hi++]);

  // Splice scratch_ over [lo, hi); the vector keeps its capacity, so steady state does
  // not allocate.
  const std::size_t old_count = hi - lo;
  const std::size_t new_count = scratch_.size();
  if (new_count > old_count) {
    segs.insert(segs.begin() + static_cast<std::ptrdiff_t>(hi), new_count - old_count,
                Segment{});
  } else if (new_count < old_count) {
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(lo + new_count),
               segs.begin() + static_cast<std::ptrdiff_t>(hi));
  }
  std::copy(scratch_.begin(), scratch_.end(),
            segs.begin() + static_cast<std::ptrdiff_t>(lo));
}

void IntervalFrontier::clear() {
  for (std::uint32_t i = 0; i < lists_used_; ++i) segment_lists_[i].clear();
  lists_used_ = 0;
  std::fill(slots_.begin(), slots_.end(), Slot{0, kNil});
  reader_nodes_.clear();
  epoch_ = 0;
}

DependencyLists infer_dependencies(std::span<const std::span<const AccessRange>> ops) {
  DependencyLists lists;
  lists.offsets.reserve(ops.size() + 1);
  std::size_t uses = 0;
  for (const auto& op_uses : ops) uses += op_uses.size();
  // Most uses contribute one or two predecessors; this avoids regrowth in the common case.
  lists.deps.reserve(2 * uses);

  IntervalFrontier frontier;
  lists.offsets.push_back(0);
  for (std::size_t op = 0; op < ops.size(); ++op) {
    const std::size_t row = lists.deps.size();
    for (const AccessRange& use : ops[op]) {
      frontier.record(static_cast<OpIndex>(op), use, lists.deps);
    }
    const auto row_begin = lists.deps.begin() + static_cast<std::ptrdiff_t>(row);
    if (lists.deps.end() - row_begin > 1) {
      // Reader lists are newest first, so a row that is mostly write-after-read edges
      // arrives descending: the worst input for std::sort's final insertion pass.
      if (std::is_sorted(row_begin, lists.deps.end(), std::greater<>())) {
        std::reverse(row_begin, lists.deps.end());
      } else if (!std::is_sorted(row_begin, lists.deps.end())) {
        std::sort(row_begin, lists.deps.end());
      }
      lists.deps.erase(std::unique(row_begin, lists.deps.end()), lists.deps.end());
    }
    lists.offsets.push_back(static_cast<std::uint32_t>(lists.deps.size()));
  }
  return lists;
}

}  // namespace accord::engine
