// A slow, obviously correct model of dependency inference: simulates every byte to
// find the exact frontier edges, and offers the plain hazard relation and transitive
// closure to check them against. Plain structs only, so API-level tests can reuse it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "accord/access.h"

namespace accord::testing {

// One declared use: bytes [begin, end) of `allocation` (an identity, only compared).
struct Use {
  std::uint64_t allocation = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
  Access access = Access::Read;
};

// ops[i] lists the uses of operation i, in recording order.
using OpList = std::vector<std::vector<Use>>;

// preds[j] holds the sorted, unique i < j that operation j depends on.
using Predecessors = std::vector<std::vector<std::uint32_t>>;

namespace detail {

inline void sort_unique(std::vector<std::uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace detail

// The exact frontier edges by per-byte simulation: j depends on i < j iff some byte b
// used by j has i as its last writer before j (RAW or WAW), or j writes b and i read b
// since that write (WAR). Self-edges are excluded; empty ranges touch nothing.
inline Predecessors frontier_edges(const OpList& ops) {
  struct ByteState {
    std::int64_t writer = -1;
    std::vector<std::uint32_t> readers;  // since the last write
    std::uint32_t stamp = 0;             // 1 + the op whose touch flags are below
    bool read = false;
    bool write = false;
  };
  // Allocations become dense indices; each gets a byte array as long as its largest end.
  std::vector<std::uint64_t> ids;
  std::vector<std::vector<ByteState>> bytes;
  auto index_of = [&](std::uint64_t id) {
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it != ids.end()) return static_cast<std::size_t>(it - ids.begin());
    ids.push_back(id);
    bytes.emplace_back();
    return ids.size() - 1;
  };
  for (const auto& uses : ops) {
    for (const Use& u : uses) {
      auto& a = bytes[index_of(u.allocation)];
      if (a.size() < u.end) a.resize(u.end);
    }
  }

  Predecessors preds(ops.size());
  struct Touch {
    std::size_t alloc;
    std::size_t byte;
  };
  std::vector<Touch> touched;
  for (std::uint32_t j = 0; j < ops.size(); ++j) {
    // Union of j's uses per byte first: the order of an op's own uses does not matter.
    touched.clear();
    for (const Use& u : ops[j]) {
      const std::size_t a = index_of(u.allocation);
      for (std::size_t b = u.begin; b < u.end; ++b) {
        ByteState& s = bytes[a][b];
        if (s.stamp != j + 1) {
          s.stamp = j + 1;
          s.read = s.write = false;
          touched.push_back({a, b});
        }
        s.read = s.read || reads(u.access);
        s.write = s.write || writes(u.access);
      }
    }
    for (const Touch& t : touched) {
      ByteState& s = bytes[t.alloc][t.byte];
      if (s.writer >= 0 && s.writer != j) preds[j].push_back(static_cast<std::uint32_t>(s.writer));
      if (s.write) {
        for (std::uint32_t r : s.readers) {
          if (r != j) preds[j].push_back(r);
        }
        s.writer = j;
        s.readers.clear();
      } else {
        s.readers.push_back(j);
      }
    }
    detail::sort_unique(preds[j]);
  }
  return preds;
}

// The plain hazard relation: j depends on i < j iff a use of i and a use of j share a
// byte of the same allocation and at least one of the two writes.
inline Predecessors hazard_edges(const OpList& ops) {
  Predecessors preds(ops.size());
  for (std::uint32_t j = 0; j < ops.size(); ++j) {
    for (std::uint32_t i = 0; i < j; ++i) {
      bool hazard = false;
      for (const Use& a : ops[i]) {
        for (const Use& b : ops[j]) {
          // max(begins) < min(ends): an empty range shares no byte even inside another.
          hazard = hazard ||
                   (a.allocation == b.allocation &&
                    std::max(a.begin, b.begin) < std::min(a.end, b.end) &&
                    (writes(a.access) || writes(b.access)));
        }
      }
      if (hazard) preds[j].push_back(i);
    }
  }
  return preds;
}

// Transitive closure of an edge set whose edges all go from lower to higher index:
// result[j] holds every i from which j is reachable.
inline Predecessors transitive_closure(const Predecessors& preds) {
  const std::size_t n = preds.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  Predecessors closure(n);
  for (std::size_t j = 0; j < n; ++j) {
    // Edges point forward, so every predecessor's row is final before j is visited.
    for (std::uint32_t i : preds[j]) {
      if (i >= j) continue;  // not a forward edge: ignored rather than looping forever
      reach[j][i] = true;
      for (std::size_t k = 0; k < i; ++k) {
        if (reach[i][k]) reach[j][k] = true;
      }
    }
    for (std::uint32_t i = 0; i < j; ++i) {
      if (reach[j][i]) closure[j].push_back(i);
    }
  }
  return closure;
}

}  // namespace accord::testing
