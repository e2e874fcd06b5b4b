// The daemon transport's completions: one observed submission each, waited for, polled,
// cancelled and released through the session's ring when it was submitted there, over
// gRPC otherwise. Ring submissions reuse one completion per ring ticket (RingCompletions),
// so that a submit through the ring allocates nothing once its ticket has been used.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "accord/detail/completion_impl.h"
#include "accord/v1/accord.pb.h"

namespace accord::detail {

class DaemonRuntime;

// One observed submission; the last observer releases accordd's completion handle.
// Reached only through accord::Completion handles, which keep the runtime alive, so it
// holds the runtime by pointer: a completion kept by its runtime (RingCompletions) must
// not keep the runtime alive itself.
// Thread-safety: every member is thread-safe.
class DaemonCompletion final : public CompletionImpl {
 public:
  // A submission accepted over gRPC: made here, deleted by its last observer.
  static DaemonCompletion* for_grpc(DaemonRuntime& runtime, std::uint64_t handle);

  void retain_observer() noexcept override { observers_.fetch_add(1, std::memory_order_relaxed); }
  void release_observer() noexcept override;
  Status wait() override;
  Result<bool> wait_for(std::chrono::nanoseconds timeout) override;
  bool poll() const noexcept override;
  std::optional<Status> result() const override;
  void cancel() noexcept override;
  std::optional<CompletionProfile> profile() const override;
  const void* domain() const noexcept override;
  std::uint64_t handle() const noexcept { return handle_; }

 private:
  friend class RingCompletions;
  DaemonCompletion(DaemonRuntime& runtime, std::uint64_t handle, std::optional<std::uint32_t> ring_ticket)
      : runtime_(&runtime), handle_(handle), ring_ticket_(ring_ticket) {}
  ~DaemonCompletion() = default;
  std::optional<Status> cached() const;
  // Records a terminal event; returns false for a pending one.
  bool absorb(const v1::CompletionEvent& event) const;

  DaemonRuntime* runtime_;
  std::uint64_t handle_;                      // set again when a ring completion is reused
  std::optional<std::uint32_t> ring_ticket_;  // fixed: a ring completion belongs to its ticket
  std::atomic<std::uint32_t> observers_{1};
  mutable std::mutex mu_;
  mutable std::optional<Status> outcome_;
  mutable std::optional<CompletionProfile> profile_;
};

// The completions of ring submissions, one per ring ticket, made on the ticket's first
// use and reused after. A ticket carries one submission at a time, and a completion's
// last observer gives its ticket back only when it is done with the object, so the
// completion of ticket t is never in two submissions' hands.
// Thread-safety: take() from any thread, by the thread that holds `ticket`.
class RingCompletions {
 public:
  explicit RingCompletions(std::size_t tickets) : by_ticket_(tickets) {}

  // The completion of ring ticket `ticket` (below the count given at construction), now
  // observing accordd's completion `handle`, with one observer. Allocates only on the
  // ticket's first use.
  DaemonCompletion* take(DaemonRuntime& runtime, std::uint32_t ticket, std::uint64_t handle);

 private:
  struct Delete {
    void operator()(DaemonCompletion* completion) const noexcept { delete completion; }
  };
  std::vector<std::unique_ptr<DaemonCompletion, Delete>> by_ticket_;
};

}  // namespace accord::detail
