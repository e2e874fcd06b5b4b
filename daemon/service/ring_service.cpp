#include "daemon/service/ring_service.h"

#include <spdlog/spdlog.h>

namespace accord::service {

Result<std::unique_ptr<RingService>> RingService::start(engine::Scheduler& scheduler,
                                                        const wire::RingPollerOptions& options) {
  std::unique_ptr<RingService> service(new RingService(scheduler));
  ACCORD_ASSIGN_OR_RETURN(service->poller_, wire::RingPoller::start(*service, options));
  return service;
}

RingService::~RingService() {
  std::unordered_map<std::uint64_t, std::shared_ptr<SessionRing>> rings;
  {
    const std::lock_guard lock(mu_);
    rings.swap(rings_);
  }
  for (auto& [id, ring] : rings) {
    poller_->remove(*ring);
    ring->close();
  }
  poller_.reset();
}

Result<RingService::Opened> RingService::open(const std::shared_ptr<ServiceSession>& session,
                                              std::uint64_t features) {
  {
    const std::lock_guard lock(mu_);
    if (rings_.count(session->id()) != 0)
      return invalid_error("session " + std::to_string(session->id()) + " has its submission ring already");
  }
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<SessionRing> ring, SessionRing::create(session, scheduler_, features));
  {
    const std::lock_guard lock(mu_);
    if (!rings_.emplace(session->id(), ring).second)
      return invalid_error("session " + std::to_string(session->id()) + " has its submission ring already");
  }
  if (Status added = poller_->add(ring); !added.ok()) {
    const std::lock_guard lock(mu_);
    rings_.erase(session->id());
    return added;
  }
  return Opened{ring->ring.fd(), ring->ring.geometry()};
}

void RingService::close(std::uint64_t session_id) noexcept {
  std::shared_ptr<SessionRing> ring;
  {
    const std::lock_guard lock(mu_);
    auto it = rings_.find(session_id);
    if (it == rings_.end()) return;
    ring = std::move(it->second);
    rings_.erase(it);
  }
  poller_->remove(*ring);
  ring->close();
}

std::size_t RingService::open_rings() const {
  const std::lock_guard lock(mu_);
  return rings_.size();
}

bool RingService::can_take(wire::ServedRing& ring) noexcept { return static_cast<SessionRing&>(ring).can_take(); }

void RingService::on_entry(wire::ServedRing& ring, const wire::SubmitEntry& entry) noexcept {
  static_cast<SessionRing&>(ring).serve(entry);
}

void RingService::on_idle() noexcept {
  // A ring client waits in its own process, so no thread of accordd waits for its GPU
  // region; a poller spinning anyway sees the region's completion word, and answers, a
  // hop sooner than the device's completion thread would.
  if (devices_polled_now_.load(std::memory_order_relaxed) ||
      devices_polled_now_.exchange(true, std::memory_order_acquire))
    return;
  scheduler_.poll_devices();
  devices_polled_now_.store(false, std::memory_order_release);
}

void RingService::on_corrupt(wire::ServedRing& ring) noexcept {
  spdlog::warn("session {}: its submission ring's index is impossible; the ring is no longer served",
               static_cast<SessionRing&>(ring).session_id());
}

}  // namespace accord::service
