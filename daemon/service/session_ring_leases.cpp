// Host leases on a session's ring: the same rules and errors as the gRPC calls (both go
// through ServiceSession and the engine's one lease check), with every field of the
// entry checked first, since the client wrote it. A lease that must wait does not make
// the poller wait: it parks a LeaseSlot in the engine's queue and is answered from the
// thread whose submission ended.
#include <string>
#include <utility>

#include "daemon/service/session_ring.h"
#include "daemon/service/session_ring_impl.h"

namespace accord::service {
namespace {

using wire::CompletionEntry;
using wire::RingOp;
using wire::SubmitEntry;

// The answer to an AcquireLease: the lease's handle when held, else the refusal naming
// the buffer.
CompletionEntry lease_answer(std::uint64_t tag, std::uint64_t buffer, bool write, Status& status) {
  CompletionEntry done;
  done.tag = tag;
  done.opcode = static_cast<std::uint32_t>(RingOp::AcquireLease);
  if (status.ok()) {
    done.handle = SessionRing::lease_handle(buffer, write);
  } else {
    status = std::move(status).annotate("buffer handle " + std::to_string(buffer));
    done.status = ring_status_code(status);
  }
  return done;
}

}  // namespace

void SessionRing::LeaseSlot::on_lease(Status outcome) noexcept {
  SessionRing& r = *ring;
  {
    const std::lock_guard lock(r.ticket_mu_);
    ++r.telling_;  // close() waits for this answer to be written
  }
  // Copied out, so the slot can be given back before the client hears the answer: a
  // client that acquires again at once must find it free.
  const std::uint64_t answered_tag = tag;
  const std::uint64_t answered_buffer = buffer;
  const bool answered_write = write;
  engine::Ref<engine::Allocation> held = std::move(allocation);
  if (outcome.ok()) outcome = r.session_->lease_granted(answered_buffer, *held, answered_write);
  {
    const std::lock_guard lock(r.ticket_mu_);
    queued = false;
    r.free_lease_slots_.push_back(this);  // capacity reserved at create()
  }
  held.reset();  // may free the buffer's memory, when the client freed its handle meanwhile
  const CompletionEntry done = lease_answer(answered_tag, answered_buffer, answered_write, outcome);
  r.answer(done, outcome.message());
  r.answered_terminal();  // may let close() destroy the ring: nothing of it below
}

SessionRing::LeaseSlot* SessionRing::take_lease_slot() noexcept {
  const std::lock_guard lock(ticket_mu_);
  if (closed_ || free_lease_slots_.empty()) return nullptr;
  LeaseSlot* slot = free_lease_slots_.back();
  free_lease_slots_.pop_back();
  slot->queued = true;
  ++owed_;  // its answer may come later: keep its place on the completion queue
  return slot;
}

void SessionRing::acquire_lease(const SubmitEntry& entry) noexcept {
  ServiceSession& session = *session_;
  if ((entry.count & ~(wire::kLeaseWrite | wire::kLeaseWait)) != 0) {
    answer_status(entry, invalid_error("lease flags " + std::to_string(entry.count) +
                                       " of buffer handle " + std::to_string(entry.handle) +
                                       ": only write (1) and wait (2) are defined"));
    return;
  }
  engine::Ref<engine::Allocation> allocation = session.buffer(entry.handle);
  if (!allocation) {
    answer_status(entry, invalid_error("unknown buffer handle " + std::to_string(entry.handle) + " in this session"));
    return;
  }
  // The engine leases whole allocations (engine item 1); the range is still checked, so a
  // client's wrong view is reported rather than silently widened.
  const std::uint64_t size = allocation->bytes();
  if (entry.length == 0 || entry.offset > size || entry.length > size - entry.offset) {
    answer_status(entry, invalid_error("lease range at offset " + std::to_string(entry.offset) + " of " +
                                       std::to_string(entry.length) + " bytes is outside buffer handle " +
                                       std::to_string(entry.handle) + " (" + std::to_string(size) + " bytes)"));
    return;
  }
  const bool write = (entry.count & wire::kLeaseWrite) != 0;
  Status status;
  if ((entry.count & wire::kLeaseWait) == 0) {
    status = session.acquire_lease(entry.handle, *allocation, write, false);
  } else if (LeaseSlot* slot = take_lease_slot(); slot == nullptr) {
    status = busy_error(std::to_string(lease_slots_.size()) + " leases of this session wait for device work already");
  } else {
    slot->tag = entry.tag;
    slot->buffer = entry.handle;
    slot->write = write;
    slot->allocation = allocation;
    Result<bool> held = session.acquire_lease_or_wait(entry.handle, *allocation, write, *slot);
    if (held.ok() && !held.value()) return;  // queued: the slot answers when told (may be told already)
    if (!held.ok()) status = std::move(held).status();
    const std::lock_guard lock(ticket_mu_);
    slot->allocation.reset();
    slot->queued = false;
    free_lease_slots_.push_back(slot);
    --owed_;  // answered below, now
  }
  const CompletionEntry done = lease_answer(entry.tag, entry.handle, write, status);
  answer(done, status.message());
}

void SessionRing::release_lease(const SubmitEntry& entry) noexcept {
  // The handle is lease_handle(buffer, write); anything else the session does not hold
  // is refused by ServiceSession like an unknown lease over gRPC.
  Status status = session_->release_lease(entry.handle >> 1, (entry.handle & 1) != 0);
  if (!status.ok()) status = std::move(status).annotate("lease handle " + std::to_string(entry.handle));
  answer_status(entry, status);
}

void SessionRing::close_leases() noexcept {
  for (const auto& slot : lease_slots_) {
    {
      const std::lock_guard lock(ticket_mu_);
      if (!slot->queued) continue;
    }
    // Still queued: taken out here and nothing is held. Otherwise it was told (this waits
    // for its on_lease to return), and it recorded or released the lease itself.
    if (!session_->cancel_lease_wait(*slot)) continue;
    const engine::Ref<engine::Allocation> dropped = std::move(slot->allocation);  // freed outside the lock
    const std::lock_guard lock(ticket_mu_);
    slot->queued = false;
    free_lease_slots_.push_back(slot.get());
    --owed_;
  }
}

}  // namespace accord::service
