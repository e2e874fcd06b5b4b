// An owned observer of one submission. Copies observe the same submission. Dropping
// every observer never cancels the work, but while an observer lives its graph slot
// stays reserved (ARCHITECTURE.md engine items 6-7).
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "accord/status.h"
#include <utility>

namespace accord {

namespace detail {
class CompletionImpl;
class RuntimeImpl;
}

// Host-observed timing of one submission: not a measurement of kernel execution.
struct CompletionProfile {
  double elapsed_us = 0;           // accepted submission -> terminal result
  std::optional<double> queue_us;  // accepted submission -> first region start; empty if none ran
};

class Completion {
 public:
  Completion() = default;
  Completion(const Completion& other) noexcept;
  Completion& operator=(const Completion& other) noexcept;
  Completion(Completion&& other) noexcept
      : impl_(std::exchange(other.impl_, nullptr)), runtime_(std::move(other.runtime_)) {}
  Completion& operator=(Completion&& other) noexcept;
  ~Completion();

  bool valid() const noexcept { return impl_ != nullptr; }

  // Blocks until the submission is terminal. The calling thread may run ready regions
  // of this submission itself. OK, Execution (a region failed; the message names it),
  // Cancelled, or Invalid on an empty observer. Thread-safe.
  Status wait() const;
  // Waits at most `timeout`; never cancels. true when terminal, false on timeout, or the
  // terminal error.
  Result<bool> wait_for(std::chrono::nanoseconds timeout) const;
  // Non-blocking: true when terminal (done, failed or cancelled). Never runs work.
  bool poll() const noexcept;
  bool is_complete() const noexcept { return poll(); }
  // The terminal result, or empty while pending.
  std::optional<Status> result() const;
  // Skips regions that have not started; running ones drain; the submission then ends
  // Cancelled (a failure takes precedence). Does not affect other submissions.
  void cancel() const noexcept;
  // Empty until terminal.
  std::optional<CompletionProfile> profile() const;

  // Used by transports: adopts one observer reference already counted on `impl`, and
  // keeps the runtime (and its engine or connection) alive as long as the observer.
  Completion(detail::CompletionImpl* impl, std::shared_ptr<detail::RuntimeImpl> runtime) noexcept
      : impl_(impl), runtime_(std::move(runtime)) {}
  detail::CompletionImpl* impl() const noexcept { return impl_; }

 private:
  detail::CompletionImpl* impl_ = nullptr;
  std::shared_ptr<detail::RuntimeImpl> runtime_;
};

}  // namespace accord
