#include "daemon/engine/session.h"

#include "daemon/engine/engine.h"

namespace accord::engine {

Status SessionLimits::validate() const {
  if (max_submissions == 0 || graph_slots == 0)
    return invalid_error("runtime capacities must be nonzero (max_submissions " +
                         std::to_string(max_submissions) + ", graph_slots " +
                         std::to_string(graph_slots) + ")");
  if (graph_slots > 4096) return invalid_error("graph_slots must be at most 4096");
  return Status();
}

Session::Session(Engine& engine, std::uint64_t id, SessionLimits limits, std::string label)
    : engine_(engine), id_(id), limits_(std::move(limits)), label_(std::move(label)) {}

Result<Ref<Allocation>> Session::allocate(std::size_t bytes, MemoryPlacement placement) {
  if (bytes == 0) return invalid_error("cannot allocate 0 bytes");
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX))
    return invalid_error("allocation of " + std::to_string(bytes) + " bytes exceeds PTRDIFF_MAX");
  const int device = engine_.devices().find_for(placement);
  if (device < 0)
    return unsupported_error("no device here holds " + placement.to_string() +
                             " memory (devices present: host only)");
  if (limits_.memory_budget) {
    std::uint64_t used = budget_used_.load(std::memory_order_relaxed);
    do {
      if (used + bytes > *limits_.memory_budget)
        return busy_error("memory budget exhausted: " + std::to_string(used) + " of " +
                          std::to_string(*limits_.memory_budget) + " bytes in use, " +
                          std::to_string(bytes) + " more requested");
    } while (!budget_used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  } else {
    budget_used_.fetch_add(bytes, std::memory_order_relaxed);
  }
  auto memory = engine_.device_registry().at(static_cast<std::size_t>(device))
                    .allocate(devices::AllocationRequest{bytes, placement});
  if (!memory.ok()) {
    release_budget(bytes);
    return std::move(memory).status();
  }
  const bool import = placement.kind() == MemoryPlacement::Kind::Shared;
  stats_.add_allocation(bytes, import);
  engine_.counters().add_allocation(bytes, import);
  return make_ref<Allocation>(Ref<Session>::retain(this), engine_.next_id(),
                              static_cast<std::uint8_t>(device), placement,
                              std::move(memory).value(), bytes);
}

void Session::release_budget(std::uint64_t bytes) noexcept {
  budget_used_.fetch_sub(bytes, std::memory_order_relaxed);
}

Result<Ref<Kernel>> Session::load_kernel(const devices::CodeImage& image,
                                         const KernelContract& contract) {
  ACCORD_RETURN_IF_ERROR(contract.validate());
  // Host kernels run on the host device, which is always index 0.
  constexpr std::uint8_t kHostDevice = 0;
  auto code = engine_.device_registry().at(kHostDevice).load(image, contract);
  if (!code.ok()) return std::move(code).status();
  return make_ref<Kernel>(Ref<Session>::retain(this), kHostDevice, std::move(code).value());
}

Result<Submission*> Session::submit(PreparedGraph& graph, std::span<Submission* const> producers) {
  return engine_.scheduler().submit(graph, producers);
}

Status Session::acquire_lease(Allocation& allocation, LeaseMode mode, bool block) {
  return engine_.scheduler().acquire_lease(allocation, mode, block);
}

void Session::release_lease(Allocation& allocation, LeaseMode mode) noexcept {
  engine_.scheduler().release_lease(allocation, mode);
}

Status Session::start_trace(std::size_t capacity) {
  // Preallocate outside the scheduler lock, then swap in under it.
  if (capacity == 0) return invalid_error("trace event capacity must be nonzero");
  return engine_.scheduler().locked([&] { return trace.start(capacity); });
}

std::optional<ExecutionTrace> Session::finish_trace() {
  return engine_.scheduler().locked([&] { return trace.finish(); });
}

}  // namespace accord::engine
