// One submission slot of a prepared graph: per-region run state preallocated at prepare,
// the completion signal, and the observer count that keeps the slot reserved. A submit
// resets a free slot in place, so submitting never allocates (engine items 5-7).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "accord/detail/completion_impl.h"
#include "accord/status.h"
#include "daemon/devices/device.h"
#include "daemon/engine/trace_buffer.h"

namespace accord::engine {

class PreparedGraph;
class Submission;

// Told once when a submission becomes terminal, on the thread that finished it, after
// the session lock was released: it must not block (the gRPC service starts a stream
// write here). The listener must hold an observer of the submission until it is told
// or removed, so the slot is not reused under it. Owned by the caller; see
// Scheduler::add_listener.
class TerminalListener {
 public:
  virtual void on_terminal(Submission& submission) noexcept = 0;
  TerminalListener* next_listener = nullptr;  // session lock, until detached to be told

 protected:
  ~TerminalListener() = default;
};

inline constexpr std::size_t kMaxProducers = 16;

enum class RegionState : std::uint8_t { Pending, Running, Done };

// The completion sink of one region of one slot; the device reports through it.
class RegionRun final : public devices::CompletionSink {
 public:
  void on_done() noexcept override;
  void on_error(Status status) noexcept override;
  void on_cancelled() noexcept override;

  Submission* submission = nullptr;
  std::uint32_t region = 0;
  RegionState state = RegionState::Pending;  // session lock (SessionSchedule::mu)
  Clock::time_point started;                 // session lock
  // Native waits handed to the device at launch: room for every same-device
  // predecessor, preallocated at prepare so that a launch never allocates.
  std::unique_ptr<devices::RegionWait[]> waits;
  std::uint32_t wait_capacity = 0;
  std::uint32_t wait_count = 0;  // session lock; filled when the region is picked
  // Session lock. A region of a natively waiting device is `launched` once its
  // launch() call returned: only then may a successor wait on it natively.
  bool launched = false;
  // Session lock. Failed by the watchdog: the device's late report, if it ever
  // comes, is ignored (the graph is quarantined, so the slot is never reused).
  bool abandoned = false;
};

class Submission final : public detail::CompletionImpl {
 public:
  Submission(PreparedGraph& graph, std::uint32_t index, std::size_t regions);
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;
  virtual ~Submission() = default;

  // --- CompletionImpl (thread-safe) ---
  void retain_observer() noexcept override;
  void release_observer() noexcept override;
  Status wait() override;
  Result<bool> wait_for(std::chrono::nanoseconds timeout) override;
  bool poll() const noexcept override;
  std::optional<Status> result() const override;
  void cancel() noexcept override;
  std::optional<CompletionProfile> profile() const override;
  const void* domain() const noexcept override;

  PreparedGraph& graph() const noexcept { return *graph_; }
  std::uint32_t index() const noexcept { return index_; }
  bool terminal() const noexcept { return signal.load(std::memory_order_acquire) == kTerminal; }
  // Once terminal: returns when every listener has been told, and so has let go of its
  // observer (listeners release before they answer). Yields meanwhile: telling runs
  // right after the submission ends, outside every lock, and takes microseconds.
  void wait_until_told() const noexcept;

  // --- scheduler state (its session's scheduling lock, SessionSchedule::mu, unless atomic) ---
  static constexpr std::uint32_t kIdle = 0, kPending = 1, kTerminal = 2;
  std::atomic<std::uint32_t> signal{kIdle};  // futex word
  std::atomic<std::uint32_t> waiters{0};     // threads asleep on `signal`
  std::atomic<std::uint32_t> observers{0};
  std::unique_ptr<RegionRun[]> runs;
  std::uint32_t region_count = 0;
  bool occupied = false;  // accepted and not yet finished
  std::uint32_t remaining = 0;  // regions not Done
  std::uint32_t running = 0;
  std::uint32_t blockers = 0;   // earlier pending submissions that conflict
  std::uint32_t producers_pending = 0;
  // Launches of natively waiting regions still inside Device::launch(): the
  // submission cannot finish (and its slot cannot be reused) until they returned.
  std::uint32_t launching = 0;
  // 1 while its listeners are detached but not all told (outside the session lock);
  // remove_listener() waits for 0 so a listener is never destroyed while being told.
  std::atomic<std::uint32_t> telling{0};
  bool cancel_requested = false;
  bool failed = false;
  bool any_started = false;
  Status outcome;  // terminal result; written before `signal` turns terminal
  Clock::time_point accepted, first_start, finished;
  std::array<Submission*, kMaxProducers> producers{};
  std::uint32_t producer_count = 0;
  TerminalListener* listeners = nullptr;  // detached at finish, then told outside the lock
  Submission* prev = nullptr;  // the session's pending list, in submission order
  Submission* next = nullptr;

 private:
  PreparedGraph* graph_;
  std::uint32_t index_;
};

}  // namespace accord::engine
