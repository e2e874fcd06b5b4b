#include "daemon/engine/engine.h"

namespace accord::engine {

Status EngineOptions::validate() const {
  if (worker_threads > 64) return invalid_error("worker_threads must be at most 64");
  return Status();
}

Engine::Engine(devices::DeviceRegistry devices, std::size_t workers)
    : devices_(std::move(devices)),
      scheduler_(std::make_unique<Scheduler>(devices_, stats_, workers)) {}

Engine::~Engine() {
  // Drain and join while scheduler_ still points at the scheduler: finishing regions
  // reach it through the engine. Then it goes, before the devices it launches on.
  scheduler_->shutdown();
  scheduler_.reset();
}

Result<std::unique_ptr<Engine>> Engine::create(const EngineOptions& options,
                                               devices::DeviceRegistry devices) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  if (devices.size() == 0) return invalid_error("an engine needs at least the host device");
  if (devices.size() > kMaxDevices)
    return invalid_error("at most " + std::to_string(kMaxDevices) + " devices per engine");
  return std::unique_ptr<Engine>(new Engine(std::move(devices), options.worker_threads));
}

Result<Ref<Session>> Engine::open_session(const SessionLimits& limits, std::string label) {
  ACCORD_RETURN_IF_ERROR(limits.validate());
  return make_ref<Session>(*this, next_id(), limits, std::move(label));
}

}  // namespace accord::engine
