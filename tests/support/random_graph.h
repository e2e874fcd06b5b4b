// Deterministic random operation lists for property tests of dependency inference:
// the same seed gives the same graph on every platform (mt19937_64 is fully specified
// and we avoid the standard distributions, which are not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/support/brute_force_oracle.h"

namespace accord::testing {

struct RandomGraphOptions {
  std::size_t min_ops = 1;
  std::size_t max_ops = 40;
  std::size_t max_allocations = 5;       // at least one is always used
  std::size_t max_allocation_size = 64;  // bytes; each allocation draws its own size
  std::size_t min_uses = 1;              // per op
  std::size_t max_uses = 4;
  unsigned empty_range_percent = 5;   // uses with begin == end
  unsigned whole_range_percent = 25;  // uses covering their whole allocation
};

namespace detail {

// Uniform in [lo, hi]; the modulo bias is irrelevant for test generation.
inline std::size_t draw(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  return lo + static_cast<std::size_t>(rng() % (hi - lo + 1));
}

}  // namespace detail

inline OpList random_graph(std::uint64_t seed, const RandomGraphOptions& options = {}) {
  std::mt19937_64 rng(seed);
  using detail::draw;
  const std::size_t allocation_count = draw(rng, 1, options.max_allocations);
  std::vector<std::uint64_t> ids(allocation_count);
  std::vector<std::size_t> sizes(allocation_count);
  for (std::size_t a = 0; a < allocation_count; ++a) {
    // Sparse, large identities, like the handles the engine will see.
    ids[a] = (rng() | 1) * (a + 1);
    sizes[a] = draw(rng, 1, options.max_allocation_size);
  }
  OpList ops(draw(rng, options.min_ops, options.max_ops));
  for (auto& uses : ops) {
    uses.resize(draw(rng, options.min_uses, options.max_uses));
    for (Use& u : uses) {
      const std::size_t a = draw(rng, 0, allocation_count - 1);
      u.allocation = ids[a];
      const unsigned roll = static_cast<unsigned>(draw(rng, 0, 99));
      if (roll < options.empty_range_percent) {
        u.begin = u.end = draw(rng, 0, sizes[a]);
      } else if (roll < options.empty_range_percent + options.whole_range_percent) {
        u.begin = 0;
        u.end = sizes[a];
      } else {
        u.begin = draw(rng, 0, sizes[a] - 1);
        u.end = draw(rng, u.begin + 1, sizes[a]);
      }
      u.access = static_cast<Access>(draw(rng, 0, 2));
    }
  }
  return ops;
}

}  // namespace accord::testing
