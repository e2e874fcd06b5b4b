// The transport side of a Completion: one submission slot that counts its observers.
// Implemented by the engine's submission slot (embedded) and by the daemon transport's
// client-side slot. Not for application code.
#pragma once

#include <chrono>
#include <optional>

#include "accord/completion.h"
#include "accord/status.h"

namespace accord::detail {

class CompletionImpl {
 public:
  // Observer counting: while the count is nonzero the slot is not reused, and the
  // object stays alive. Thread-safe, allocation-free.
  virtual void retain_observer() noexcept = 0;
  virtual void release_observer() noexcept = 0;

  virtual Status wait() = 0;
  virtual Result<bool> wait_for(std::chrono::nanoseconds timeout) = 0;
  virtual bool poll() const noexcept = 0;
  virtual std::optional<Status> result() const = 0;
  virtual void cancel() noexcept = 0;
  virtual std::optional<CompletionProfile> profile() const = 0;
  // Identity of the scheduling domain the submission belongs to, so submit_after can
  // refuse producers from another runtime.
  virtual const void* domain() const noexcept = 0;

 protected:
  ~CompletionImpl() = default;
};

}  // namespace accord::detail
