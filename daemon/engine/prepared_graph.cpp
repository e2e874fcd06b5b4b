#include "daemon/engine/prepared_graph.h"

#include "daemon/engine/session.h"

namespace accord::engine {

PreparedGraph::PreparedGraph(Ref<Session> session, std::uint64_t id) noexcept
    : session_(std::move(session)), id_(id) {}

// Members go in reverse order: slots, then native regions, then the kernels and
// allocations those regions point into.
PreparedGraph::~PreparedGraph() = default;

Status PreparedGraph::check_devices(const devices::DeviceRegistry& registry) const {
  for (std::size_t i = 0; i < devices_.size(); ++i)
    if (Status s = registry.check_generation(devices_[i], device_generations_[i]); !s.ok()) return s;
  return Status();
}

}  // namespace accord::engine
