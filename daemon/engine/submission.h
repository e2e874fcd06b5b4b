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

// Told once when a submission becomes terminal, on the thread that finished it, under
// the scheduler lock: it must not call back into the scheduler and must not block (the
// gRPC service starts a stream write here). Owned by the caller; see
// Scheduler::add_listener.
class TerminalListener {
 public:
  virtual void on_terminal(Submission& submission) noexcept = 0;
  TerminalListener* next_listener = nullptr;  // scheduler lock

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
  RegionState state = RegionState::Pending;  // scheduler lock
  Clock::time_point started;                 // scheduler lock
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

  // --- scheduler state (scheduler lock unless atomic) ---
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
  bool cancel_requested = false;
  bool failed = false;
  bool any_started = false;
  Status outcome;  // terminal result; written before `signal` turns terminal
  Clock::time_point accepted, first_start, finished;
  std::array<Submission*, kMaxProducers> producers{};
  std::uint32_t producer_count = 0;
  TerminalListener* listeners = nullptr;  // told at finish, then cleared
  Submission* prev = nullptr;  // pending list, in submission order
  Submission* next = nullptr;

 private:
  PreparedGraph* graph_;
  std::uint32_t index_;
};

}  // namespace accord::engine
