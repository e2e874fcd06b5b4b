#include "daemon/engine/engine.h"

namespace accord::engine {

Status EngineOptions::validate() const {
  if (worker_threads > 64) return invalid_error("worker_threads must be at most 64");
  if (watchdog_timeout < std::chrono::milliseconds(1))
    return invalid_error("watchdog_timeout must be at least 1 ms");
  return Status();
}

Engine::Engine(devices::DeviceRegistry devices, const EngineOptions& options)
    : devices_(std::move(devices)),
      scheduler_(std::make_unique<Scheduler>(
          devices_, stats_, SchedulerOptions{options.worker_threads, options.watchdog_timeout, options.on_device_lost,
                                          options.on_device_recovered, std::chrono::microseconds{1000},
                                          options.forecast_sleep})) {}

Engine::~Engine() {
  // Drain and join while scheduler_ still points at the scheduler: finishing regions
  // reach it through the engine. Then stop the devices' threads, so no late report
  // (of a region the watchdog abandoned) can arrive; then the scheduler goes, with the
  // quarantined graphs whose native regions and memory need their devices alive; the
  // devices go last.
  scheduler_->shutdown();
  devices_.shut_down_all();
  scheduler_.reset();
}

Result<std::unique_ptr<Engine>> Engine::create(const EngineOptions& options,
                                               devices::DeviceRegistry devices) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  if (devices.size() == 0) return invalid_error("an engine needs at least the host device");
  if (devices.size() > 4096) return invalid_error("at most 4096 devices per engine");
  return std::unique_ptr<Engine>(new Engine(std::move(devices), options));
}

Result<Ref<Session>> Engine::open_session(const SessionLimits& limits, std::string label) {
  ACCORD_RETURN_IF_ERROR(limits.validate());
  return make_ref<Session>(*this, next_id(), next_tenant_.fetch_add(1, std::memory_order_relaxed), limits,
                           std::move(label));
}

}  // namespace accord::engine
