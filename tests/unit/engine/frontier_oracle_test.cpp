// infer_dependencies against the brute-force oracle on thousands of seeded random
// graphs: exact frontier edges, only real hazards, and the hazards' full ordering.
// interval_frontier_test.cpp has the hand-written cases; a failure here prints its seed.
#include <catch2/catch.hpp>
#include <vector>

#include "daemon/engine/interval_frontier.h"
#include "tests/support/brute_force_oracle.h"
#include "tests/support/random_graph.h"

namespace accord::engine {
namespace {

using testing::OpList;
using testing::Predecessors;

Predecessors inferred_edges(const OpList& ops) {
  std::vector<std::vector<AccessRange>> ranges(ops.size());
  std::vector<std::span<const AccessRange>> spans;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (const testing::Use& u : ops[i]) {
      ranges[i].push_back({u.allocation, u.begin, u.end, u.access});
    }
    spans.emplace_back(ranges[i]);
  }
  const DependencyLists lists = infer_dependencies(spans);
  Predecessors preds(ops.size());
  for (OpIndex op = 0; op < ops.size(); ++op) {
    const auto row = lists.of(op);
    preds[op].assign(row.begin(), row.end());
  }
  return preds;
}

bool subset_of(const Predecessors& edges, const Predecessors& allowed) {
  for (std::size_t j = 0; j < edges.size(); ++j) {
    for (std::uint32_t i : edges[j]) {
      if (!std::binary_search(allowed[j].begin(), allowed[j].end(), i)) return false;
    }
  }
  return true;
}

TEST_CASE("inferred dependencies match the brute-force frontier on random graphs",
          "[engine][frontier][random]") {
  constexpr std::uint64_t kGraphs = 6000;
  for (std::uint64_t seed = 0; seed < kGraphs; ++seed) {
    // Sweep the shape with the seed so small, crowded graphs are as common as large ones.
    testing::RandomGraphOptions options;
    options.max_ops = 1 + seed % 40;
    options.max_allocations = 1 + (seed / 40) % 5;
    options.max_allocation_size = 1 + (seed * 7) % 64;
    const OpList ops = testing::random_graph(seed, options);
    const Predecessors inferred = inferred_edges(ops);
    const Predecessors hazards = testing::hazard_edges(ops);

    INFO("seed " << seed << " (testing::random_graph with max_ops " << options.max_ops
                 << ", max_allocations " << options.max_allocations
                 << ", max_allocation_size " << options.max_allocation_size << ")");
    REQUIRE(inferred == testing::frontier_edges(ops));
    REQUIRE(subset_of(inferred, hazards));
    REQUIRE(testing::transitive_closure(inferred) == testing::transitive_closure(hazards));
  }
}

}  // namespace
}  // namespace accord::engine
