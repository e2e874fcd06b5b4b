#include "accord/executable_graph.h"

#include "client/src/transport.h"

namespace accord {

Result<Completion> ExecutableGraph::submit_after(std::span<const Completion> after) const {
  if (!impl_) return invalid_error("empty executable graph handle");
  return impl_->submit_after(after);
}

std::size_t ExecutableGraph::regions() const noexcept { return impl_ ? impl_->regions.size() : 0; }
std::size_t ExecutableGraph::nodes() const noexcept { return impl_ ? impl_->nodes() : 0; }
std::span<const Node> ExecutableGraph::dependencies(Node node) const noexcept {
  return impl_ ? impl_->dependencies(node) : std::span<const Node>();
}
const RegionInfo& ExecutableGraph::region(std::size_t region) const noexcept {
  return impl_->regions[region];
}

}  // namespace accord
