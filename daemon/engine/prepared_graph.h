// A prepared graph: operations lowered into lane regions with region predecessors, the
// union access summary for ordering against other submissions and for lease checks,
// everything it touches retained, and its submission slots (engine items 3, 9).
// Immutable after prepare except for the scheduler-owned slot state and quarantine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "accord/lane.h"
#include "client/api/wait_forecast.h"
#include "daemon/devices/device.h"
#include "daemon/devices/device_registry.h"
#include "daemon/engine/access_summary.h"
#include "daemon/engine/allocation.h"
#include "daemon/engine/interval_frontier.h"
#include "daemon/engine/kernel.h"
#include "daemon/engine/ref.h"
#include "daemon/engine/submission.h"

namespace accord::engine {

class Session;

struct PreparedRegion {
  devices::DeviceIndex device = 0;
  LaneKind lane = LaneKind::Compute;
  std::uint32_t lane_slot = 0;  // index of (device, lane) in a session's lane table
  // The device honours RegionWaits: this region may launch while its same-device
  // predecessors still run, waiting for them natively (ARCHITECTURE.md, native waits).
  bool native_waits = false;
  std::unique_ptr<devices::NativeRegion> native;
  std::vector<std::uint32_t> predecessors;  // regions, sorted
  std::vector<std::uint32_t> ops;           // operation indices, in order
  std::uint64_t copy_bytes = 0;             // explicit copy bytes the region executes
};

// One allocation the graph touches, with the union of its accesses.
struct AllocationUse {
  Allocation* allocation = nullptr;  // retained by PreparedGraph::retained_
  bool reads = false;
  bool writes = false;
  // The first binding that uses it, so errors name something the client recorded.
  std::uint32_t first_node = 0;
  std::uint32_t first_binding = 0;
};

class PreparedGraph final : public RefCounted {
 public:
  PreparedGraph(Ref<Session> session, std::uint64_t id) noexcept;

  Session& session() const noexcept { return *session_; }
  std::uint64_t id() const noexcept { return id_; }
  const std::vector<PreparedRegion>& regions() const noexcept { return regions_; }
  const std::vector<AllocationUse>& uses() const noexcept { return uses_; }
  const DependencyLists& dependencies() const noexcept { return deps_; }
  const AccessSummary& summary() const noexcept { return summary_; }
  std::size_t op_count() const noexcept { return op_count_; }
  // True if two submissions of this graph must be ordered (it writes something).
  bool self_conflicting() const noexcept { return self_conflicting_; }
  // True if some region does not depend on the one before it (worth waking a peer).
  bool parallel() const noexcept { return parallel_; }
  // Every device the graph touches: the devices its regions run on and the homes of
  // its allocations, sorted. A submit fails at once when one of them is lost.
  const std::vector<devices::DeviceIndex>& devices() const noexcept { return devices_; }
  // The generation of devices()[i] the graph was prepared in: after that device
  // restarts, the graph is lost (DeviceRegistry::check_generation).
  const std::vector<std::uint32_t>& device_generations() const noexcept { return device_generations_; }
  // OK while every device of the graph is present in the generation it was prepared in.
  Status check_devices(const devices::DeviceRegistry& registry) const;
  std::size_t slot_count() const noexcept { return slots_.size(); }
  Submission& slot(std::size_t i) const noexcept { return *slots_[i]; }
  // Where the scheduler's search for a free slot starts, under the session's scheduling
  // lock: one past the slot taken last, so that a graph submitted again and again takes
  // its slots in turn. A GPU executor reports a slot's launch after accordd has seen it
  // end; relaunching that very slot made its launching thread look for the report first.
  std::size_t& next_slot() noexcept { return next_slot_; }

  // How long its submissions take from acceptance to their end, so that a waiter may
  // sleep through most of it (Scheduler::help_until_terminal). Thread-safe.
  WaitForecast& forecast() const noexcept { return forecast_; }

  bool quarantined() const noexcept { return quarantined_.load(std::memory_order_acquire); }
  void quarantine() noexcept { quarantined_.store(true, std::memory_order_release); }

 private:
  friend class GraphLowering;
  ~PreparedGraph() override;

  Ref<Session> session_;
  std::uint64_t id_;
  std::vector<Ref<Allocation>> retained_;
  std::vector<Ref<Kernel>> kernels_;
  std::vector<AllocationUse> uses_;
  std::vector<PreparedRegion> regions_;
  std::vector<devices::DeviceIndex> devices_;
  std::vector<std::uint32_t> device_generations_;
  DependencyLists deps_;
  AccessSummary summary_;
  std::size_t op_count_ = 0;
  bool self_conflicting_ = false;
  bool parallel_ = false;
  std::vector<std::unique_ptr<Submission>> slots_;
  std::size_t next_slot_ = 0;  // the session's scheduling lock
  std::atomic<bool> quarantined_{false};
  mutable WaitForecast forecast_;
};

}  // namespace accord::engine
