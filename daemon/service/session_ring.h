// SessionRing: one session's submission ring as accordd serves it (ARCHITECTURE.md, "Data
// plane"; proto/wire/ring_layout.h). A poller thread hands it each entry the client
// wrote; it checks every field, runs the operation against the session's handles and the
// engine, and answers on the completion queue: once per entry, and for an accepted
// submission once more when it ends (from the engine's terminal listener), or once in all
// when it has ended already and the client asked for that (ring_layout.h, "Features").
// A graph measured short (RingInlinePolicy) runs on the poller thread right after it is
// admitted, sparing a worker's wake-up. Tickets for the listeners are preallocated, one
// per submission the session may have pending.
// Host leases are served here too, with the gRPC path's rules (ServiceSession); a lease
// that must wait for device work parks a preallocated lease slot in the engine
// (engine::LeaseWaiter) and is answered when granted, so neither the poller thread nor
// the session's later entries wait for it. A lease's handle on the ring is its buffer
// handle and mode (lease_handle()), so releasing needs no table of its own.
// Thread-safety: serve() and can_take() on the serving poller thread; terminal answers
// and granted leases from engine threads; close() once by the owner, after the poller
// stopped serving it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "daemon/engine/engine.h"
#include "daemon/service/ring_inline_policy.h"
#include "daemon/service/service_session.h"
#include "proto/wire/ring_poller.h"

namespace accord::service {

class SessionRing final : public wire::ServedRing {
 public:
  // A ring for `session` sized for its limits, answering with the kRingFeature* bits of
  // `features` (ring_layout.h). Errors: those of SubmissionRing::create.
  static Result<std::shared_ptr<SessionRing>> create(std::shared_ptr<ServiceSession> session,
                                                     engine::Scheduler& scheduler, std::uint64_t features = 0);
  ~SessionRing();

  // Room on the completion queue for one answer and for every terminal answer owed.
  bool can_take() noexcept;
  // Runs one entry (a copy the client can no longer change) and answers it.
  void serve(const wire::SubmitEntry& entry) noexcept;
  // Stops every terminal answer still to come (unregisters the listeners and drops
  // their observers). After the poller's remove(); once.
  void close() noexcept;

  std::uint64_t session_id() const noexcept { return session_->id(); }

  // The ring's name for a lease on buffer `buffer` (a session handle) in `write` mode:
  // every read lease of one buffer shares a handle, and each ReleaseLease ends one.
  static std::uint64_t lease_handle(std::uint64_t buffer, bool write) noexcept { return (buffer << 1) | (write ? 1 : 0); }

  // Implementation details, public for the listener types in session_ring*.cpp.
  struct Ticket;
  struct LeaseSlot;

 private:
  SessionRing(wire::SubmissionRing mapped, std::shared_ptr<ServiceSession> session, engine::Scheduler& scheduler,
              std::size_t tickets, std::size_t lease_slots, std::uint64_t features);
  void submit(const wire::SubmitEntry& entry) noexcept;
  // session_ring_leases.cpp
  void acquire_lease(const wire::SubmitEntry& entry) noexcept;
  void release_lease(const wire::SubmitEntry& entry) noexcept;
  LeaseSlot* take_lease_slot() noexcept;
  // Stops every lease answer still to come (close()).
  void close_leases() noexcept;
  // Pushes `answer` with `message` (the error text, if any) and rings the client.
  void answer(wire::CompletionEntry answer, std::string_view message) noexcept;
  void answer_status(const wire::SubmitEntry& entry, const Status& status) noexcept;
  Ticket* take_ticket() noexcept;
  void give_back(Ticket& ticket) noexcept;
  // A terminal answer was written (or dropped): its reserved place and its telling_ count go.
  void answered_terminal() noexcept;
  friend struct Ticket;
  friend struct LeaseSlot;

  std::shared_ptr<ServiceSession> session_;
  engine::Scheduler& scheduler_;
  const bool combined_answers_;  // wire::kRingFeatureCombinedAnswers
  const bool quiet_acks_;        // wire::kRingFeatureQuietAcks
  std::mutex answer_mu_;  // the completion queue has one producer at a time
  wire::RingProducer<wire::CompletionEntry> answers_;
  std::mutex ticket_mu_;
  std::vector<std::unique_ptr<Ticket>> tickets_;  // fixed at create()
  std::vector<Ticket*> free_;                    // reserved for every ticket: give_back never allocates
  std::vector<std::unique_ptr<LeaseSlot>> lease_slots_;  // fixed at create()
  std::vector<LeaseSlot*> free_lease_slots_;             // reserved for every slot
  std::uint32_t owed_ = 0;                       // terminal and lease answers to come (ticket_mu_)
  std::uint32_t telling_ = 0;                    // on_terminal calls writing an answer now (ticket_mu_)
  std::condition_variable told_;                 // telling_ fell
  bool closed_ = false;                          // ticket_mu_
  RingInlinePolicy inline_policy_;               // thread-safe
};

}  // namespace accord::service
