#include "daemon/engine/session.h"

#include "daemon/engine/engine.h"

namespace accord::engine {

Status SessionLimits::validate() const {
  if (max_submissions == 0 || graph_slots == 0)
    return invalid_error("runtime capacities must be nonzero (max_submissions " +
                         std::to_string(max_submissions) + ", graph_slots " +
                         std::to_string(graph_slots) + ")");
  if (graph_slots > 4096) return invalid_error("graph_slots must be at most 4096");
  if (priority < -kMaxPriority || priority > kMaxPriority)
    return invalid_error("priority " + std::to_string(priority) + " is not in " + std::to_string(-kMaxPriority) +
                         ".." + std::to_string(kMaxPriority));
  return Status();
}

Session::Session(Engine& engine, std::uint64_t id, std::uint64_t tenant, SessionLimits limits, std::string label)
    : schedule(*this, engine.devices().size() * kLaneKindCount),
      engine_(engine),
      scheduler_(engine.scheduler()),
      id_(id),
      tenant_(tenant),
      limits_(std::move(limits)),
      label_(std::move(label)) {
  scheduler_.add_session(schedule);
}

// Through the scheduler captured at construction, not the engine: a quarantined graph
// may release the last reference while the engine destroys its scheduler.
Session::~Session() { scheduler_.remove_session(schedule); }

Result<Ref<Allocation>> Session::allocate(std::size_t bytes, MemoryPlacement placement) {
  if (bytes == 0) return invalid_error("cannot allocate 0 bytes");
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX))
    return invalid_error("allocation of " + std::to_string(bytes) + " bytes exceeds PTRDIFF_MAX");
  devices::DeviceRegistry& registry = engine_.device_registry();
  const int device = registry.find_for(placement, limits_.isolation);
  if (device < 0)
    return unsupported_error("no device here holds " + placement.to_string() + " memory (devices: " +
                             registry.describe() + ")");
  // Read before the device is asked: memory made across a restart is of the old one.
  const std::uint32_t generation = registry.generation(static_cast<std::size_t>(device));
  if (registry.lost(static_cast<std::size_t>(device)))
    return registry.lost_error(static_cast<std::size_t>(device)).annotate("allocating " + placement.to_string());
  // Charge what was asked for first, so concurrent allocations cannot overshoot the
  // budget together; then settle to what the device granted (GPU memory comes in
  // 2 MiB units), which may still exceed the budget.
  ACCORD_RETURN_IF_ERROR(charge_budget(bytes, bytes));
  auto memory = registry.at(static_cast<std::size_t>(device)).allocate(devices::AllocationRequest{bytes, placement});
  if (!memory.ok()) {
    release_budget(bytes);
    return std::move(memory).status();
  }
  const std::size_t granted = memory.value()->bytes();
  if (granted < bytes) {
    release_budget(bytes);
    return internal_error("device " + registry.at(static_cast<std::size_t>(device)).info().name + " granted " +
                          std::to_string(granted) + " bytes for a request of " + std::to_string(bytes));
  }
  if (granted > bytes) {
    if (Status s = charge_budget(granted - bytes, granted); !s.ok()) {
      release_budget(bytes);
      return s;
    }
  }
  const bool import = placement.kind() == MemoryPlacement::Kind::Shared;
  stats_.add_allocation(granted, import);
  engine_.counters().add_allocation(granted, import);
  return make_ref<Allocation>(Ref<Session>::retain(this), engine_.next_id(),
                              static_cast<devices::DeviceIndex>(device), generation, placement,
                              std::move(memory).value(), bytes);
}

Status Session::charge_budget(std::uint64_t bytes, std::uint64_t request) {
  if (!limits_.memory_budget) {
    budget_used_.fetch_add(bytes, std::memory_order_relaxed);
    return Status();
  }
  std::uint64_t used = budget_used_.load(std::memory_order_relaxed);
  do {
    if (used + bytes > *limits_.memory_budget)
      return busy_error("memory budget exhausted: " + std::to_string(used) + " of " +
                        std::to_string(*limits_.memory_budget) + " bytes in use, " + std::to_string(request) +
                        " more requested");
  } while (!budget_used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return Status();
}

void Session::release_budget(std::uint64_t bytes) noexcept {
  budget_used_.fetch_sub(bytes, std::memory_order_relaxed);
}

Result<Ref<Kernel>> Session::load_kernel(const devices::CodeImage& image,
                                         const KernelContract& contract) {
  ACCORD_RETURN_IF_ERROR(contract.validate());
  devices::DeviceRegistry& registry = engine_.device_registry();
  const int device = registry.find(image.device, limits_.isolation);
  if (device < 0)
    return unsupported_error("cannot load kernel '" + image.name + "' on " + image.device.to_string() +
                             ": no such device here (devices: " + registry.describe() + ")");
  const auto index = static_cast<devices::DeviceIndex>(device);
  const std::uint32_t generation = registry.generation(index);
  if (registry.lost(index)) return registry.lost_error(index).annotate("loading kernel '" + image.name + "'");
  auto code = registry.at(index).load(image, contract);
  if (!code.ok()) return std::move(code).status();
  return make_ref<Kernel>(Ref<Session>::retain(this), index, generation, std::move(code).value());
}

Result<Submission*> Session::submit(PreparedGraph& graph, std::span<Submission* const> producers) {
  return scheduler_.submit(graph, producers);
}

Status Session::acquire_lease(Allocation& allocation, LeaseMode mode, bool block) {
  return scheduler_.acquire_lease(allocation, mode, block);
}

Result<bool> Session::acquire_lease_or_wait(Allocation& allocation, LeaseMode mode, LeaseWaiter& waiter) {
  return scheduler_.acquire_lease_or_wait(allocation, mode, waiter);
}

bool Session::cancel_lease_wait(LeaseWaiter& waiter) noexcept { return scheduler_.cancel_lease_wait(waiter); }

void Session::release_lease(Allocation& allocation, LeaseMode mode) noexcept {
  scheduler_.release_lease(allocation, mode);
}

Status Session::start_trace(std::size_t capacity) {
  // Under the session's scheduling lock, which the scheduler holds while recording.
  if (capacity == 0) return invalid_error("trace event capacity must be nonzero");
  std::lock_guard lock(schedule.mu);
  return trace.start(capacity);
}

std::optional<ExecutionTrace> Session::finish_trace() {
  std::lock_guard lock(schedule.mu);
  return trace.finish();
}

}  // namespace accord::engine
