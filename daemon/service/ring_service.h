// RingService: accordd's side of the submission rings. It opens a session's ring when the
// client asks on the session channel (OpenRing), serves every ring from one RingPoller
// (a few threads for all sessions), and closes a session's ring when its channel closes.
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "daemon/engine/engine.h"
#include "daemon/service/service_session.h"
#include "daemon/service/session_ring.h"
#include "proto/wire/ring_poller.h"

namespace accord::service {

class RingService final : private wire::RingHandler {
 public:
  // Starts the poller threads. Errors: those of RingPoller::start.
  static Result<std::unique_ptr<RingService>> start(engine::Scheduler& scheduler,
                                                    const wire::RingPollerOptions& options);
  // Closes every ring still open, then stops the pollers. Before the engine goes.
  ~RingService();
  RingService(const RingService&) = delete;
  RingService& operator=(const RingService&) = delete;

  struct Opened {
    int fd = -1;  // the ring's memfd, to send to the client; borrowed: valid until close()
    wire::RingGeometry geometry;
  };
  // Opens `session`'s ring and starts serving it, with the kRingFeature* bits of
  // `features` the client asked for (ring_layout.h; unknown bits are ignored). Invalid
  // when the session has one already; Busy when every poller thread is full; the errors
  // of creating the ring.
  Result<Opened> open(const std::shared_ptr<ServiceSession>& session, std::uint64_t features = 0);
  // Stops serving the session's ring and every answer still owed. Nothing when it has none.
  void close(std::uint64_t session_id) noexcept;

  std::size_t open_rings() const;
  // The poller threads holding rings now, and the most that may (RingPoller::active, most).
  std::size_t pollers_serving() const noexcept { return poller_->active(); }
  std::size_t pollers_most() const noexcept { return poller_->most(); }

 private:
  explicit RingService(engine::Scheduler& scheduler) : scheduler_(scheduler) {}
  bool can_take(wire::ServedRing& ring) noexcept override;
  void on_entry(wire::ServedRing& ring, const wire::SubmitEntry& entry) noexcept override;
  void on_corrupt(wire::ServedRing& ring) noexcept override;
  void on_idle() noexcept override;

  engine::Scheduler& scheduler_;
  // One idle poller at a time polls the devices; the others see it held with a load
  // and go on spinning on their rings.
  std::atomic<bool> devices_polled_now_{false};
  std::unique_ptr<wire::RingPoller> poller_;
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, std::shared_ptr<SessionRing>> rings_;  // by session id
};

}  // namespace accord::service
