// A tenant of the engine: one embedded runtime, or one client process of the daemon.
// Every object belongs to exactly one session; limits, statistics, lanes and the trace
// are per session. Sessions are refcounted: their objects retain them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/placement.h"
#include "accord/statistics.h"
#include "accord/status.h"
#include "accord/trace.h"
#include "daemon/devices/device.h"
#include "daemon/engine/graph_spec.h"
#include "daemon/engine/ref.h"
#include "daemon/engine/session_schedule.h"
#include "daemon/engine/stat_counters.h"
#include "daemon/engine/trace_buffer.h"

namespace accord::engine {

class Engine;
class LeaseWaiter;
class PreparedGraph;
class Scheduler;
class Submission;

inline constexpr int kMaxPriority = 1000;

struct SessionLimits {
  std::size_t max_submissions = 64;  // pending submissions; more is Busy
  std::size_t graph_slots = 2;       // submission slots per prepared graph
  std::optional<std::uint64_t> memory_budget;  // live allocation bytes; more is Busy
  // Scheduling priority: 0 default, positive more urgent, negative less. Given to
  // devices as RegionRequest::priority (the CUDA backend maps it to stream priorities).
  // The service grants it within accordd's [priorities] configuration.
  int priority = 0;
  // The session's isolation group ("uid:1001"): a device added to the registry with this
  // group (a GPU executor of its own) serves its placements and code before the shared
  // one. Empty: shared devices only.
  std::string isolation;
  // Invalid for zero capacities and for a priority outside [-kMaxPriority, kMaxPriority].
  Status validate() const;
};

enum class LeaseMode : std::uint8_t { Read, Write };

// Thread-safety: every public member is thread-safe; `schedule` and `trace` are the
// scheduler's, under schedule.mu.
class Session final : public RefCounted {
 public:
  Session(Engine& engine, std::uint64_t id, std::uint64_t tenant, SessionLimits limits, std::string label);

  std::uint64_t id() const noexcept { return id_; }
  // The session's place in the order sessions were opened in this engine (1, 2, 3, ...,
  // unlike id(), which objects of every kind share): what a device keeps tenants apart by
  // (RegionRequest::tenant, e.g. spreading them over CUDA contexts in turn).
  std::uint64_t tenant() const noexcept { return tenant_; }
  const std::string& label() const noexcept { return label_; }
  const SessionLimits& limits() const noexcept { return limits_; }
  Engine& engine() const noexcept { return engine_; }

  // Zero-initialised storage on the home device of `placement`, charged to the budget
  // at the size the device granted. Invalid for 0 bytes; Unsupported when no device here
  // holds the placement; DeviceLost when that device is lost; Busy over the budget.
  // Thread-safe.
  Result<Ref<Allocation>> allocate(std::size_t bytes, MemoryPlacement placement);
  // Loads code on the device `image.device` names, which then runs it (its Host,
  // Compute or NPU lane by kind). Unsupported when no such device is here; DeviceLost
  // when it is lost; the device's own load errors otherwise. Thread-safe.
  Result<Ref<Kernel>> load_kernel(const devices::CodeImage& image, const KernelContract& contract);
  // Infers dependencies, checks contracts and lowers (engine items 1-3, 11). Messages
  // name the node and binding at fault. Thread-safe.
  Result<Ref<PreparedGraph>> prepare(GraphSpec spec);
  // Accepts one run of `graph` after `producers`; never blocks, never allocates. On
  // success the returned slot carries one observer reference for the caller.
  Result<Submission*> submit(PreparedGraph& graph, std::span<Submission* const> producers);
  // Host leases (engine item 8). `block` waits for conflicting device work; otherwise
  // that is Busy. Conflicting live leases are Busy at once.
  Status acquire_lease(Allocation& allocation, LeaseMode mode, bool block);
  // The same without blocking: true when granted now; false when `waiter` was queued to
  // be told later (Scheduler::acquire_lease_or_wait); the errors above otherwise.
  Result<bool> acquire_lease_or_wait(Allocation& allocation, LeaseMode mode, LeaseWaiter& waiter);
  // Scheduler::cancel_lease_wait.
  bool cancel_lease_wait(LeaseWaiter& waiter) noexcept;
  void release_lease(Allocation& allocation, LeaseMode mode) noexcept;

  Statistics statistics() const noexcept { return stats_.snapshot(); }
  Status start_trace(std::size_t capacity);
  std::optional<ExecutionTrace> finish_trace();

  // --- engine internals ---
  StatCounters& counters() noexcept { return stats_; }
  void release_budget(std::uint64_t bytes) noexcept;
  // Adds `bytes` to the budget in use; Busy (naming `request`) when it would overflow.
  Status charge_budget(std::uint64_t bytes, std::uint64_t request);
  // The session's scheduling state (engine item 13): its own lock, pending submissions,
  // lanes (sized at construction for every device of the engine) and lease waiters.
  SessionSchedule schedule;
  TraceBuffer trace;  // schedule.mu

 private:
  // Leaves the scheduler's session list.
  ~Session() override;
  Engine& engine_;
  Scheduler& scheduler_;
  std::uint64_t id_;
  std::uint64_t tenant_;
  SessionLimits limits_;
  std::string label_;
  StatCounters stats_;
  std::atomic<std::uint64_t> budget_used_{0};
};

}  // namespace accord::engine
