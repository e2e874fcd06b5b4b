// The engine: one per daemon (or per embedded runtime). It owns the devices, the
// scheduler and the engine-wide statistics; sessions are its tenants. This is the one
// header that service/ and client/src/embedded include.
//
// Ownership: create_* and prepare return owned objects (Ref<T> or unique_ptr). The
// Engine must outlive every session and every object of every session; destroying it
// drains pending work first. Everything else is borrowed unless a comment says so.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "accord/statistics.h"
#include "accord/status.h"
#include "daemon/devices/device_registry.h"
#include "daemon/engine/allocation.h"
#include "daemon/engine/graph_spec.h"
#include "daemon/engine/kernel.h"
#include "daemon/engine/prepared_graph.h"
#include "daemon/engine/ref.h"
#include "daemon/engine/scheduler.h"
#include "daemon/engine/session.h"
#include "daemon/engine/stat_counters.h"
#include "daemon/engine/submission.h"

namespace accord::engine {

struct EngineOptions {
  // Worker threads that run regions. 0: inline mode (regions run on waiting threads).
  std::size_t worker_threads = 2;
  // A region that has not reported after this long is failed with Execution and its
  // device marked lost (ARCHITECTURE.md: the seed's 60 s).
  std::chrono::milliseconds watchdog_timeout{60'000};
  // Told once per lost device, on the reporting thread, outside engine locks; must not
  // block (accordd logs it). May be empty.
  std::function<void(devices::DeviceIndex, const Status&)> on_device_lost;
  // Told when a lost device serves new work again, the same way; may be empty.
  std::function<void(devices::DeviceIndex, const std::string&)> on_device_recovered;
  // SchedulerOptions::forecast_sleep (an embedded runtime's RuntimeOptions::forecast_sleep
  // Always sets it).
  bool forecast_sleep = false;
  Status validate() const;
};

class Engine {
 public:
  // Takes the devices (the host device first; daemon/devices/composition builds them).
  // Invalid options or no devices -> Invalid.
  static Result<std::unique_ptr<Engine>> create(const EngineOptions& options,
                                                devices::DeviceRegistry devices);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // A new tenant. Invalid limits -> Invalid. Thread-safe.
  Result<Ref<Session>> open_session(const SessionLimits& limits, std::string label);

  Statistics statistics() const noexcept { return stats_.snapshot(); }
  const devices::DeviceRegistry& devices() const noexcept { return devices_; }

  // --- internals for sessions ---
  devices::DeviceRegistry& device_registry() noexcept { return devices_; }
  Scheduler& scheduler() noexcept { return *scheduler_; }
  StatCounters& counters() noexcept { return stats_; }
  std::uint64_t next_id() noexcept { return next_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Engine(devices::DeviceRegistry devices, const EngineOptions& options);
  devices::DeviceRegistry devices_;
  StatCounters stats_;
  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<std::uint64_t> next_tenant_{1};  // Session::tenant
  std::unique_ptr<Scheduler> scheduler_;  // last member: destroyed (drained) first
};

}  // namespace accord::engine
