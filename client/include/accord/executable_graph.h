// A prepared graph: bindings fixed, dependencies inferred, regions lowered, and a
// bounded set of reusable submission slots. Submitting does no inference and no heap
// allocation. Copies share one prepared object; pending submissions keep it alive.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "accord/completion.h"
#include "accord/graph.h"
#include "accord/lane.h"
#include "accord/status.h"

namespace accord {

namespace detail {
class ExecutableGraphImpl;
}

struct RegionInfo {
  LaneKind lane = LaneKind::Compute;
  std::vector<Node> nodes;              // in execution order
  std::vector<std::size_t> predecessors;  // regions that must finish first
};

class ExecutableGraph {
 public:
  ExecutableGraph() = default;
  bool valid() const noexcept { return impl_ != nullptr; }

  // Submits one run. Never blocks. Errors, in check order: DeviceLost (graph
  // quarantined or an allocation poisoned), Invalid (a producer of another runtime),
  // Busy (max_submissions reached; a conflicting host lease; every graph slot in use
  // or still observed). Thread-safe.
  Result<Completion> submit() const { return submit_after({}); }
  // As submit(), but runs only after every producer in `after` succeeded; a failed or
  // cancelled producer fails this submission. At most 16 producers.
  Result<Completion> submit_after(std::span<const Completion> after) const;

  // Number of lowered regions (each may hold many operations).
  std::size_t regions() const noexcept;
  std::size_t nodes() const noexcept;
  // The inferred predecessors of `node` (sorted). Empty for an unknown node.
  std::span<const Node> dependencies(Node node) const noexcept;
  // Lowering of the graph, for inspection. Precondition: region < regions().
  const RegionInfo& region(std::size_t region) const noexcept;

  explicit ExecutableGraph(std::shared_ptr<detail::ExecutableGraphImpl> impl) noexcept
      : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::ExecutableGraphImpl>& impl() const noexcept { return impl_; }

 private:
  std::shared_ptr<detail::ExecutableGraphImpl> impl_;
};

}  // namespace accord
