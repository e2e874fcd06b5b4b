#include "client/src/embedded/embedded_objects.h"

#include <array>

#include "accord/detail/completion_impl.h"

namespace accord::detail {
namespace {

engine::LeaseMode to_engine(LeaseMode mode) {
  return mode == LeaseMode::Read ? engine::LeaseMode::Read : engine::LeaseMode::Write;
}

}  // namespace

Status EmbeddedBuffer::acquire(LeaseMode mode, bool block) {
  return runtime_->session().acquire_lease(*allocation_, to_engine(mode), block);
}

void EmbeddedBuffer::release(LeaseMode mode) noexcept {
  runtime_->session().release_lease(*allocation_, to_engine(mode));
}

EmbeddedGraph::EmbeddedGraph(std::shared_ptr<EmbeddedRuntime> runtime,
                             engine::Ref<engine::PreparedGraph> graph)
    : runtime_(std::move(runtime)), graph_(std::move(graph)) {
  const engine::DependencyLists& inferred = graph_->dependencies();
  dep_offsets = inferred.offsets;
  deps.reserve(inferred.deps.size());
  for (engine::OpIndex d : inferred.deps) deps.push_back(Node{d});
  for (const engine::PreparedRegion& r : graph_->regions()) {
    RegionInfo info;
    info.lane = r.lane;
    for (std::uint32_t op : r.ops) info.nodes.push_back(Node{op});
    info.predecessors.assign(r.predecessors.begin(), r.predecessors.end());
    regions.push_back(std::move(info));
  }
}

Result<Completion> EmbeddedGraph::submit_after(std::span<const Completion> after) {
  std::array<engine::Submission*, engine::kMaxProducers> producers{};
  if (after.size() > producers.size())
    return invalid_error("submit_after accepts at most " + std::to_string(producers.size()) +
                         " producers, got " + std::to_string(after.size()));
  const void* domain = &runtime_->session();
  for (std::size_t i = 0; i < after.size(); ++i) {
    CompletionImpl* impl = after[i].impl();
    if (impl == nullptr) return invalid_error("producer " + std::to_string(i) + " is an empty completion");
    if (impl->domain() != domain)
      return invalid_error("producer " + std::to_string(i) + " belongs to another runtime");
    // Same domain: the implementation is this engine's submission slot.
    producers[i] = static_cast<engine::Submission*>(impl);
  }
  auto slot = runtime_->session().submit(*graph_, std::span(producers.data(), after.size()));
  if (!slot.ok()) return std::move(slot).status();
  return Completion(slot.value(), runtime_);
}

}  // namespace accord::detail
