#include "daemon/engine/prepared_graph.h"

#include "daemon/engine/session.h"

namespace accord::engine {

PreparedGraph::PreparedGraph(Ref<Session> session, std::uint64_t id) noexcept
    : session_(std::move(session)), id_(id) {}

// Members go in reverse order: slots, then native regions, then the kernels and
// allocations those regions point into.
PreparedGraph::~PreparedGraph() = default;

}  // namespace accord::engine
