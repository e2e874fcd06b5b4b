// Serving one session's ring. Handles in entries are the session's own (the same tables
// gRPC uses), so another session's objects are simply not found; every answer carries
// the entry's tag back unchanged.
#include "daemon/service/session_ring.h"

#include "daemon/service/session_ring_impl.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace accord::service {
namespace {

using wire::CompletionEntry;
using wire::RingOp;
using wire::SubmitEntry;

constexpr std::uint32_t kSubmissionQueue = 256;
constexpr std::uint32_t kMaxProducersPerEntry = 3;

// The ring whose serve() runs on this thread, if any (answer()).
thread_local const SessionRing* t_serving = nullptr;

std::uint32_t next_power_of_two(std::size_t n) {
  std::uint32_t p = 2;
  while (p < n && p < 65536) p <<= 1;
  return p;
}

}  // namespace

struct SessionRing::Ticket final : engine::TerminalListener {
  SessionRing* ring = nullptr;
  std::uint64_t tag = 0;
  std::uint64_t handle = 0;
  std::uint64_t graph = 0;                   // the graph's handle, for the inline policy
  engine::Submission* submission = nullptr;  // one observer of it, held until told or closed

  void on_terminal(engine::Submission& s) noexcept override { tell(s, 1); }

  // Answers the end of `s` with `terminal` 1, or 2 when no acceptance was sent for it
  // (kRingFeatureCombinedAnswers: the poller found it ended already).
  void tell(engine::Submission& s, std::uint32_t terminal) noexcept {
    SessionRing& r = *ring;
    engine::Submission* observer = nullptr;
    {
      const std::lock_guard lock(r.ticket_mu_);
      observer = std::exchange(submission, nullptr);
      if (observer != nullptr) ++r.telling_;  // close() waits for this call to end
    }
    // Taken by close(), which waits in remove_listener() for this call to return and then
    // drops the observer itself: the session is going, nobody reads the answer.
    if (observer == nullptr) return;
    CompletionEntry done;
    done.tag = tag;
    done.opcode = static_cast<std::uint32_t>(RingOp::Submit);
    done.terminal = terminal;
    done.handle = handle;
    const std::optional<Status> result = s.result();
    const Status outcome = result.value_or(internal_error("told of a submission that is not terminal"));
    done.status = ring_status_code(outcome);
    if (auto profile = s.profile()) {
      done.elapsed_us = profile->elapsed_us;
      done.queue_us = profile->queue_us.value_or(-1.0);
      r.inline_policy_.ran(graph, *profile);
    }
    // Let go of the submission slot and of the ticket before the client hears the outcome:
    // a client that drops its completion and submits again at once must find both free.
    // The answer's place on the queue stays reserved (owed) until it is written.
    observer->release_observer();  // `s` may be reused from here on
    r.give_back(*this);
    r.answer(done, outcome.message());
    r.answered_terminal();
  }
};

Result<std::shared_ptr<SessionRing>> SessionRing::create(std::shared_ptr<ServiceSession> session,
                                                         engine::Scheduler& scheduler, std::uint64_t features) {
  const std::size_t pending = session->engine_session().limits().max_submissions;
  // Leases waiting at once: as many as submissions pending, which is more than a client
  // with a thread per waiting lease uses; beyond that a waiting lease is Busy.
  const std::size_t lease_slots = pending;
  // Every entry in the submission queue, every pending submission and every waiting
  // lease may owe an answer at once; twice that keeps the queue from being the bottleneck.
  const std::uint32_t answers = next_power_of_two(2 * (kSubmissionQueue + pending + lease_slots));
  ACCORD_ASSIGN_OR_RETURN(wire::SubmissionRing ring, wire::SubmissionRing::create({kSubmissionQueue, answers}));
  return std::shared_ptr<SessionRing>(
      new SessionRing(std::move(ring), std::move(session), scheduler, pending, lease_slots, features));
}

SessionRing::SessionRing(wire::SubmissionRing mapped, std::shared_ptr<ServiceSession> session,
                         engine::Scheduler& scheduler, std::size_t tickets, std::size_t lease_slots,
                         std::uint64_t features)
    : wire::ServedRing(std::move(mapped)),
      session_(std::move(session)),
      scheduler_(scheduler),
      combined_answers_((features & wire::kRingFeatureCombinedAnswers) != 0),
      quiet_acks_((features & wire::kRingFeatureQuietAcks) != 0),
      answers_(this->ring.completions()) {
  owner = session_->id();
  tickets_.reserve(tickets);
  free_.reserve(tickets);
  for (std::size_t i = 0; i < tickets; ++i) {
    tickets_.push_back(std::make_unique<Ticket>());
    tickets_.back()->ring = this;
    free_.push_back(tickets_.back().get());
  }
  lease_slots_.reserve(lease_slots);
  free_lease_slots_.reserve(lease_slots);
  for (std::size_t i = 0; i < lease_slots; ++i) {
    lease_slots_.push_back(std::make_unique<LeaseSlot>());
    lease_slots_.back()->ring = this;
    free_lease_slots_.push_back(lease_slots_.back().get());
  }
}

SessionRing::~SessionRing() { close(); }

bool SessionRing::can_take() noexcept {
  std::uint32_t owed = 0;
  {
    const std::lock_guard lock(ticket_mu_);
    owed = owed_;
  }
  const std::lock_guard lock(answer_mu_);
  return answers_.has_room(static_cast<std::uint32_t>(owed + 2));
}

void SessionRing::answer(CompletionEntry entry, std::string_view message) noexcept {
  const std::lock_guard lock(answer_mu_);
  if (!message.empty()) entry.message_bytes = ring.write_message(answers_.next_position(), message);
  // Full only when the client broke the protocol (can_take() kept room): its answer is
  // lost, which only that client can notice. Inside serve() the poller rings the client
  // at the end of its turn (ServedRing::answers_unrung); engine threads ring at once.
  if (t_serving == this) {
    if (answers_.try_push_unrung(entry)) answers_unrung.store(true, std::memory_order_release);
  } else {
    static_cast<void>(answers_.try_push(entry));
  }
}

void SessionRing::answer_status(const SubmitEntry& entry, const Status& status) noexcept {
  CompletionEntry done;
  done.tag = entry.tag;
  done.opcode = entry.opcode;
  done.status = ring_status_code(status);
  answer(done, status.message());
}

SessionRing::Ticket* SessionRing::take_ticket() noexcept {
  const std::lock_guard lock(ticket_mu_);
  if (closed_ || free_.empty()) return nullptr;
  Ticket* t = free_.back();
  free_.pop_back();
  ++owed_;
  return t;
}

void SessionRing::give_back(Ticket& ticket) noexcept {
  const std::lock_guard lock(ticket_mu_);
  free_.push_back(&ticket);  // capacity reserved at create()
}

void SessionRing::answered_terminal() noexcept {
  // Notified under the lock: close() may destroy the ring as soon as it sees telling_
  // fall to 0, so nothing of it may be touched after the lock is released.
  const std::lock_guard lock(ticket_mu_);
  --owed_;
  --telling_;
  told_.notify_all();
}

void SessionRing::serve(const SubmitEntry& entry) noexcept {
  // Answers written on this thread until serve() returns are left to the poller to ring.
  struct Serving {
    explicit Serving(SessionRing* r) noexcept { t_serving = r; }
    ~Serving() { t_serving = nullptr; }
  } serving(this);
  ServiceSession& session = *session_;
  switch (static_cast<RingOp>(entry.opcode)) {
    case RingOp::Submit: submit(entry); return;
    case RingOp::ReleaseCompletion:
      if (session.remove_completion(entry.handle)) {
        if (!quiet_acks_) answer_status(entry, Status());
      } else {
        answer_status(entry, invalid_error("unknown completion handle " + std::to_string(entry.handle) +
                                           " in this session"));
      }
      return;
    case RingOp::Cancel: {
      engine::Submission* s = session.retain_completion(entry.handle);
      if (s == nullptr) {
        answer_status(entry, invalid_error("unknown completion handle " + std::to_string(entry.handle) +
                                           " in this session"));
        return;
      }
      s->cancel();
      s->release_observer();
      if (!quiet_acks_) answer_status(entry, Status());
      return;
    }
    case RingOp::AcquireLease: acquire_lease(entry); return;
    case RingOp::ReleaseLease: release_lease(entry); return;
  }
  answer_status(entry, invalid_error("unknown ring opcode " + std::to_string(entry.opcode)));
}

void SessionRing::submit(const SubmitEntry& entry) noexcept {
  ServiceSession& session = *session_;
  if (entry.count > kMaxProducersPerEntry) {
    answer_status(entry, invalid_error("a ring submission names at most " + std::to_string(kMaxProducersPerEntry) +
                                       " producers, not " + std::to_string(entry.count)));
    return;
  }
  engine::Ref<engine::PreparedGraph> graph = session.graph(entry.handle);
  if (!graph) {
    answer_status(entry, invalid_error("unknown graph handle " + std::to_string(entry.handle) + " in this session"));
    return;
  }
  std::array<engine::Submission*, kMaxProducersPerEntry> producers{};
  std::uint32_t count = 0;
  Status status;
  for (; count < entry.count; ++count) {
    producers[count] = session.retain_completion(entry.producers[count]);
    if (producers[count] == nullptr) {
      status = invalid_error("producer " + std::to_string(count) + ": unknown completion handle " +
                             std::to_string(entry.producers[count]) + " in this session");
      break;
    }
  }
  Ticket* ticket = status.ok() ? take_ticket() : nullptr;
  if (status.ok() && ticket == nullptr)
    status = busy_error("the session has " + std::to_string(tickets_.size()) + " submissions pending");
  std::uint64_t handle = 0;
  engine::Submission* accepted = nullptr;
  if (status.ok()) {
    auto reserved = session.reserve_completion();
    if (!reserved.ok()) {
      status = reserved.status();
    } else {
      handle = reserved.value();
      // A graph seen to be short runs on this poller thread at once: no worker wake-up.
      const std::span<engine::Submission* const> after(producers.data(), count);
      auto slot = inline_policy_.run_here(entry.handle) ? scheduler_.submit_and_run(*graph, after)
                                                        : session.engine_session().submit(*graph, after);
      if (!slot.ok()) {
        session.cancel_reservation(handle);
        status = std::move(slot).status().annotate("graph handle " + std::to_string(entry.handle));
      } else {
        accepted = slot.value();
        accepted->retain_observer();  // the ticket's own, beside the one the handle table keeps
        session.fill_completion(handle, accepted);
      }
    }
  }
  for (std::uint32_t i = 0; i < count; ++i) producers[i]->release_observer();
  if (!status.ok()) {
    if (ticket != nullptr) {
      give_back(*ticket);
      const std::lock_guard lock(ticket_mu_);
      --owed_;  // no terminal answer will come for it
    }
    answer_status(entry, status);
    return;
  }
  {
    const std::lock_guard lock(ticket_mu_);
    ticket->tag = entry.tag;
    ticket->handle = handle;
    ticket->graph = entry.handle;
    ticket->submission = accepted;
  }
  // Ended already (it ran on this thread, or a producer had failed): one answer says
  // both, so a client that waits needs no second answer. No listener was registered, so
  // nobody else tells the ticket.
  if (combined_answers_ && accepted->terminal()) {
    ticket->tell(*accepted, 2);
    return;
  }
  CompletionEntry ok;
  ok.tag = entry.tag;
  ok.opcode = entry.opcode;
  ok.handle = handle;
  answer(ok, {});  // the acceptance goes before the terminal answer
  if (!scheduler_.add_listener(*accepted, *ticket)) ticket->on_terminal(*accepted);
}

void SessionRing::close() noexcept {
  {
    const std::lock_guard lock(ticket_mu_);
    if (closed_) return;
    closed_ = true;
  }
  for (const auto& ticket : tickets_) {
    engine::Submission* s = nullptr;
    {
      const std::lock_guard lock(ticket_mu_);
      s = std::exchange(ticket->submission, nullptr);
    }
    if (s == nullptr) continue;  // free, or being answered by on_terminal, which gives it back
    // Unregistered here, or told right now (remove_listener waits for that call to end,
    // and it found the ticket taken): either way the observer is ours to drop.
    scheduler_.remove_listener(*s, *ticket);
    s->release_observer();
    give_back(*ticket);
    const std::lock_guard lock(ticket_mu_);
    --owed_;
  }
  close_leases();
  // An answer being written when close() began finishes before the ring may go.
  std::unique_lock lock(ticket_mu_);
  told_.wait(lock, [&] { return telling_ == 0; });
}

}  // namespace accord::service
