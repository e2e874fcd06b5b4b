// The client's side of the ring. Answers are sorted by the thread that happens to read
// them; a thread that waits for its own ticket either reads (when nobody else is) or
// sleeps on the completion doorbell, which both accordd and a reader ring, so a ticket
// settled by another thread wakes its waiter. Sleeping is sliced, so a wait notices
// within a slice when accordd's side of the session channel has gone.
#include "client/src/daemon/daemon_ring.h"

#include "proto/wire/peer_priority.h"

#include <poll.h>

#include <algorithm>
#include <utility>

namespace accord::detail {
namespace {

constexpr auto kSlice = std::chrono::milliseconds(50);
// With no core to spare: the longest spin, and how long it lasts while accordd has not
// taken what this client pushed (its poller takes an entry within about a microsecond
// when it runs; when it does not, it is waiting for the core this thread spins on).
constexpr std::chrono::nanoseconds kBusySpin = std::chrono::microseconds(8);
constexpr std::chrono::nanoseconds kUntakenSpin = std::chrono::microseconds(2);
std::uint64_t tag_of(std::uint32_t index, std::uint32_t generation) {
  return (std::uint64_t{generation} << 32) | index;
}

}  // namespace

Result<std::unique_ptr<DaemonRing>> DaemonRing::attach(UniqueFd fd, std::size_t tickets, int session_socket,
                                                       std::chrono::microseconds spin, bool forecast_sleep) {
  ACCORD_ASSIGN_OR_RETURN(wire::SubmissionRing ring, wire::SubmissionRing::attach(std::move(fd)));
  return std::unique_ptr<DaemonRing>(new DaemonRing(std::move(ring), tickets, session_socket, spin, forecast_sleep));
}

DaemonRing::DaemonRing(wire::SubmissionRing ring, std::size_t tickets, int session_socket,
                       std::chrono::microseconds spin, bool forecast_sleep)
    : ring_(std::move(ring)),
      session_socket_(session_socket),
      spin_(spin),
      forecast_sleep_(forecast_sleep),
      accordd_ahead_(wire::peer_runs_ahead(session_socket)),
      requests_(ring_.submissions()),
      answers_(ring_.completions()) {
  tickets_.reserve(tickets);
  free_.reserve(tickets);
  for (std::size_t i = 0; i < tickets; ++i) {
    tickets_.push_back(std::make_unique<Ticket>());
    free_.push_back(static_cast<std::uint32_t>(tickets - 1 - i));
  }
}

Status DaemonRing::status_of(std::uint32_t code, const std::string& message) {
  if (code == 0) return Status();
  if (code - 1 > static_cast<std::uint32_t>(ErrorKind::Internal))
    return internal_error("accordd answered with status code " + std::to_string(code) + ": " + message);
  return Status::error(static_cast<ErrorKind>(code - 1), message);
}

Status DaemonRing::push(const wire::SubmitEntry& entry) {
  const std::lock_guard lock(push_mu_);
  if (!requests_.try_push(entry))
    return busy_error("the submission ring to accordd is full (" + std::to_string(ring_.geometry().sq_capacity) +
                      " entries not yet taken)");
  return Status();
}

Result<std::optional<DaemonRing::Accepted>> DaemonRing::call(wire::SubmitEntry entry, bool keep) {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  {
    const std::lock_guard lock(tickets_mu_);
    if (free_.empty()) return std::optional<Accepted>();
    index = free_.back();
    free_.pop_back();
    Ticket& t = *tickets_[index];
    generation = ++t.generation;
    t.forgotten = false;
    t.state.store(kSubmitted, std::memory_order_relaxed);
  }
  entry.tag = tag_of(index, generation);
  Ticket& t = *tickets_[index];
  if (Status pushed = push(entry); !pushed.ok()) {
    const std::lock_guard lock(tickets_mu_);
    free_ticket_locked(index);
    return pushed;
  }
  auto answered = wait_until([&] { return t.state.load(std::memory_order_acquire) != kSubmitted; },
                             std::chrono::nanoseconds(-1));
  if (!answered.ok()) {
    // accordd is gone: no answer will come, so the ticket can go at once.
    const std::lock_guard lock(tickets_mu_);
    free_ticket_locked(index);
    return std::move(answered).status();
  }
  if (t.state.load(std::memory_order_acquire) == kRefused) {
    Status refused = status_of(t.status, t.message);
    const std::lock_guard lock(tickets_mu_);
    free_ticket_locked(index);
    return refused;
  }
  const Accepted accepted{index, t.handle};
  if (!keep) {
    const std::lock_guard lock(tickets_mu_);
    free_ticket_locked(index);
  }
  return std::optional<Accepted>(accepted);
}

Result<std::optional<DaemonRing::Accepted>> DaemonRing::submit(std::uint64_t graph,
                                                               std::span<const std::uint64_t> producers) {
  if (producers.size() > kMaxProducers)
    return invalid_error("a ring submission names at most 3 producers, not " + std::to_string(producers.size()));
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::Submit);
  entry.count = static_cast<std::uint32_t>(producers.size());
  entry.handle = graph;
  std::copy(producers.begin(), producers.end(), entry.producers);
  ACCORD_ASSIGN_OR_RETURN(std::optional<Accepted> accepted, call(entry, true));
  if (accepted) {
    Ticket& t = *tickets_[accepted->ticket];
    t.graph = graph;
    t.accepted_ns = steady_clock_ns();
  }
  return accepted;
}

Result<std::optional<std::uint64_t>> DaemonRing::acquire_lease(std::uint64_t buffer, std::uint64_t offset,
                                                               std::uint64_t length, bool write, bool wait) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::AcquireLease);
  entry.count = (write ? wire::kLeaseWrite : 0) | (wait ? wire::kLeaseWait : 0);
  entry.handle = buffer;
  entry.offset = offset;
  entry.length = length;
  ACCORD_ASSIGN_OR_RETURN(const std::optional<Accepted> accepted, call(entry, false));
  if (!accepted) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(accepted->handle);
}

Result<bool> DaemonRing::release_lease(std::uint64_t lease) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::ReleaseLease);
  entry.handle = lease;
  ACCORD_ASSIGN_OR_RETURN(const std::optional<Accepted> accepted, call(entry, false));
  return accepted.has_value();
}

Status DaemonRing::release(std::uint64_t handle) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::ReleaseCompletion);
  entry.handle = handle;
  return push(entry);
}

Status DaemonRing::cancel(std::uint64_t handle) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::Cancel);
  entry.handle = handle;
  return push(entry);
}

Result<bool> DaemonRing::wait(std::uint32_t ticket, std::chrono::nanoseconds timeout) {
  const Ticket& t = *tickets_[ticket];
  const auto terminal = [&] { return t.state.load(std::memory_order_acquire) == kTerminal; };
  WaitForecast& forecast = forecast_of(t.graph);
  // Asleep through most of what the graph usually takes (nobody is asked to wake us),
  // then spin or sleep on the doorbell as before. A forecast is known only after a run
  // of this graph, and only a sleep within the caller's timeout is taken.
  if (forecast_sleep_ && !terminal()) {
    const std::int64_t sleep = forecast.sleep_ns(steady_clock_ns() - t.accepted_ns);
    if (sleep > 0 && (timeout.count() < 0 || sleep < timeout.count())) {
      sleep_precisely(sleep);
      if (timeout.count() >= 0) timeout -= std::chrono::nanoseconds(sleep);
    }
  }
  ACCORD_ASSIGN_OR_RETURN(const bool ended, wait_until(terminal, timeout));
  // accordd's own time for the run: the client's sleep cannot lengthen it.
  if (ended && t.status == 0) forecast.record(static_cast<std::int64_t>(t.elapsed_us * 1000.0));
  return ended;
}

bool DaemonRing::poll(std::uint32_t ticket) {
  const Ticket& t = *tickets_[ticket];
  if (t.state.load(std::memory_order_acquire) == kTerminal) return true;
  drain();
  return t.state.load(std::memory_order_acquire) == kTerminal;
}

Status DaemonRing::outcome(std::uint32_t ticket) const {
  const Ticket& t = *tickets_[ticket];
  return status_of(t.status, t.message);
}

CompletionProfile DaemonRing::profile(std::uint32_t ticket) const {
  const Ticket& t = *tickets_[ticket];
  CompletionProfile p;
  p.elapsed_us = t.elapsed_us;
  if (t.queue_us >= 0) p.queue_us = t.queue_us;
  return p;
}

void DaemonRing::forget(std::uint32_t ticket) {
  const std::lock_guard lock(tickets_mu_);
  Ticket& t = *tickets_[ticket];
  t.forgotten = true;
  if (t.state.load(std::memory_order_acquire) == kTerminal) free_ticket_locked(ticket);
}

void DaemonRing::free_ticket_locked(std::uint32_t index) {
  tickets_[index]->state.store(kFree, std::memory_order_relaxed);
  free_.push_back(index);  // capacity reserved for every ticket
}

bool DaemonRing::drain() {
  std::unique_lock lock(read_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool read = false;
  for (;;) {
    wire::CompletionEntry answer;
    std::uint32_t position = 0;
    if (answers_.try_pop(answer, &position) != wire::PopResult::Ok) break;
    read_to_.fetch_add(1, std::memory_order_release);
    dispatch(answer, position);
    read = true;
  }
  lock.unlock();
  if (read) {
    // Threads of this process asleep on the doorbell for tickets settled here wake and
    // look. Only when one is counted: the doorbell's line is the one accordd rings with
    // each answer, and touching it here would pull it across cores on every round trip.
    // An RMW, for the order ring_doorbell explains: either it sees a sleeper's count, or
    // that sleeper's re-check sees the tickets published above.
    if (sleeping_here_.fetch_add(0, std::memory_order_acq_rel) != 0) wire::ring_doorbell(*ring_.completions().bell);
    // Entries accordd passed over while its answers had no room are taken now.
    // (Shared indices only: the producer's own copy belongs to whoever holds push_mu_.)
    if (ring_.submissions().tail->value.load(std::memory_order_acquire) !=
        ring_.submissions().head->value.load(std::memory_order_acquire))
      wire::ring_doorbell(*ring_.submissions().bell);
  }
  return read;
}

void DaemonRing::dispatch(const wire::CompletionEntry& answer, std::uint32_t position) {
  // Releasing a completion and cancelling: nothing waits for those answers.
  if (answer.opcode == static_cast<std::uint32_t>(wire::RingOp::ReleaseCompletion) ||
      answer.opcode == static_cast<std::uint32_t>(wire::RingOp::Cancel))
    return;
  const auto index = static_cast<std::uint32_t>(answer.tag & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(answer.tag >> 32);
  if (index >= tickets_.size()) return;
  Ticket& t = *tickets_[index];
  {
    const std::lock_guard lock(tickets_mu_);
    if (t.generation != generation || t.state.load(std::memory_order_relaxed) == kFree) return;  // stale
  }
  t.status = answer.status;
  t.message = answer.message_bytes > 0 ? ring_.read_message(position, answer.message_bytes) : std::string();
  if (answer.terminal == 0) {
    t.handle = answer.handle;
    t.state.store(answer.status == 0 ? kAccepted : kRefused, std::memory_order_release);
    return;
  }
  // terminal 2 (kRingFeatureCombinedAnswers): accepted and ended in one answer; the
  // caller of call() sees kTerminal, which counts as accepted.
  if (answer.terminal == 2) t.handle = answer.handle;
  t.elapsed_us = answer.elapsed_us;
  t.queue_us = answer.queue_us;
  const std::lock_guard lock(tickets_mu_);
  t.state.store(kTerminal, std::memory_order_release);
  if (t.forgotten) free_ticket_locked(index);
}

bool DaemonRing::accordd_gone() const {
  pollfd p{session_socket_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

template <class Ready>
bool DaemonRing::spin_until(Ready ready, std::chrono::nanoseconds limit, bool watch_taken) const {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto requests = ring_.submissions();
  for (;;) {
    if (ready()) return true;
    const auto spun = Clock::now() - start;
    if (spun >= limit) return false;
    // Entries still in the submission queue this long after the wait began: accordd's
    // poller is not running (asleep, or waiting for a core). Spinning on would only keep
    // it off a core when there is no spare one, so sleep and let it ring.
    if (watch_taken && spun >= kUntakenSpin && requests.head->value.load(std::memory_order_acquire) !=
                                    requests.tail->value.load(std::memory_order_relaxed))
      return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

template <class Done>
Result<bool> DaemonRing::wait_until(Done done, std::chrono::nanoseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  bool spun = false;
  for (;;) {
    if (done()) return true;
    drain();
    if (done()) return true;
    std::chrono::nanoseconds slice = kSlice;
    if (timeout.count() >= 0) {
      const auto left = timeout - (Clock::now() - start);
      if (left <= std::chrono::nanoseconds::zero()) return false;
      slice = std::min<std::chrono::nanoseconds>(slice, left);
    }
    const auto queue = ring_.completions();
    const auto ready = [&] {
      return done() || queue.tail->value.load(std::memory_order_acquire) != read_to_.load(std::memory_order_acquire);
    };
    // One bounded spin per wait, before the first sleep: after a wake-up the answer is
    // there or this thread was woken for another one. The full spin only while a core is
    // spare, or while accordd runs ahead of us (the scheduler then hands it our core
    // whenever it needs one); otherwise a few microseconds, for an answer accordd is
    // about to write.
    if (!std::exchange(spun, true)) {
      const bool spare = cores_.spare();
      const std::chrono::nanoseconds limit = spare || accordd_ahead_ ? std::chrono::nanoseconds(spin_) : kBusySpin;
      if (spin_until(ready, std::min({limit, std::chrono::nanoseconds(spin_), slice}), !spare)) continue;
    }
    cores_.refresh();  // here, where the thread is about to sleep anyway
    // Counted here first, then the re-check inside wait_doorbell: see drain().
    sleeping_here_.fetch_add(1, std::memory_order_acq_rel);
    wire::wait_doorbell(*queue.bell, std::chrono::nanoseconds(0), slice, ready);
    sleeping_here_.fetch_sub(1, std::memory_order_relaxed);
    if (!done() && accordd_gone()) return device_lost_error("accordd closed the session while a submission was pending");
  }
}

}  // namespace accord::detail
