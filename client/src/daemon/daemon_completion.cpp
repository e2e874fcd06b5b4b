// The daemon transport's completions (see daemon_completion.h).
#include "client/src/daemon/daemon_completion.h"

#include "client/src/daemon/daemon_release.h"
#include "client/src/daemon/daemon_runtime.h"

namespace accord::detail {

DaemonCompletion* DaemonCompletion::for_grpc(DaemonRuntime& runtime, std::uint64_t handle) {
  return new DaemonCompletion(runtime, handle, std::nullopt);
}

DaemonCompletion* RingCompletions::take(DaemonRuntime& runtime, std::uint32_t ticket, std::uint64_t handle) {
  auto& completion = by_ticket_[ticket];
  if (!completion) {
    completion.reset(new DaemonCompletion(runtime, handle, ticket));
    return completion.get();
  }
  // The last observer of its previous submission left it with no outcome and no observer.
  completion->handle_ = handle;
  completion->observers_.store(1, std::memory_order_relaxed);
  return completion.get();
}

void DaemonCompletion::release_observer() noexcept {
  if (observers_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  DaemonRuntime& runtime = *runtime_;  // kept alive by the releasing accord::Completion
  const std::uint64_t handle = handle_;
  const std::optional<std::uint32_t> ticket = ring_ticket_;
  if (ticket) {
    // Reused by the ticket's next submission: nothing of this one may stay behind. No
    // lock: with no observer left, no other thread can reach this object.
    outcome_.reset();
    profile_.reset();
  } else {
    delete this;
  }
  // Ahead of any later submission in the ring, so the graph slot it frees is free when
  // that submission arrives. A full ring falls back to the gRPC call.
  DaemonRing* ring = runtime.connection().ring();
  if (ring == nullptr || !ring->release(handle).ok()) {
    v1::ReleaseCompletionRequest request;
    request.set_completion(handle);
    release_handle<v1::ReleaseCompletionRequest, v1::ReleaseCompletionResponse>(
        runtime, request, &v1::Accord::Stub::ReleaseCompletion);
  }
  // Last: from here the ticket, and this completion with it, may carry another submission.
  if (ticket) ring->forget(*ticket);
}

bool DaemonCompletion::absorb(const v1::CompletionEvent& event) const {
  if (event.state() == v1::COMPLETION_STATE_PENDING || event.state() == v1::COMPLETION_STATE_UNSPECIFIED)
    return false;
  std::lock_guard lock(mu_);
  if (outcome_) return true;
  switch (event.state()) {
    case v1::COMPLETION_STATE_SUCCEEDED: outcome_ = Status(); break;
    case v1::COMPLETION_STATE_CANCELLED: outcome_ = cancelled_error(event.error()); break;
    default: outcome_ = execution_error(event.error()); break;
  }
  CompletionProfile p;
  p.elapsed_us = event.elapsed_us();
  if (event.queue_us() >= 0) p.queue_us = event.queue_us();
  profile_ = p;
  return true;
}

std::optional<Status> DaemonCompletion::cached() const {
  std::lock_guard lock(mu_);
  return outcome_;
}

Status DaemonCompletion::wait() {
  if (ring_ticket_) {
    DaemonRing& ring = *runtime_->connection().ring();
    auto waited = ring.wait(*ring_ticket_, std::chrono::nanoseconds(-1));
    if (!waited.ok()) return std::move(waited).status();
    return ring.outcome(*ring_ticket_);
  }
  for (;;) {
    if (auto r = cached(); r) return *r;
    auto waited = wait_for(std::chrono::hours(24));
    if (!waited.ok()) return std::move(waited).status();
  }
}

Result<bool> DaemonCompletion::wait_for(std::chrono::nanoseconds timeout) {
  if (ring_ticket_) {
    DaemonRing& ring = *runtime_->connection().ring();
    ACCORD_ASSIGN_OR_RETURN(const bool done, ring.wait(*ring_ticket_, std::max(timeout, std::chrono::nanoseconds(0))));
    if (!done) return false;  // a timed wait never cancels the submission
    ACCORD_RETURN_IF_ERROR(ring.outcome(*ring_ticket_));
    return true;
  }
  if (auto r = cached(); r) {
    if (!r->ok()) return *r;
    return true;
  }
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout));
  v1::WaitCompletionRequest request;
  request.set_completion(handle_);
  auto reader = runtime_->connection().stub().WaitCompletion(&context, request);
  v1::CompletionEvent event;
  const bool got = reader->Read(&event);
  const grpc::Status status = reader->Finish();
  if (got && absorb(event)) {
    const Status outcome = *cached();
    if (!outcome.ok()) return outcome;
    return true;
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      status.error_code() == grpc::StatusCode::CANCELLED)
    return false;  // a timed wait never cancels the submission
  if (!status.ok()) return from_grpc(status, "WaitCompletion");
  return false;
}

bool DaemonCompletion::poll() const noexcept {
  // The ring's terminal answer may still be on its way when the work is visibly done
  // (a lease granted behind it returns first): then accordd is asked directly, as
  // poll() always did over gRPC.
  if (ring_ticket_ && runtime_->connection().ring()->poll(*ring_ticket_)) return true;
  {
    std::lock_guard lock(mu_);
    if (outcome_) return true;
  }
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  v1::PollCompletionRequest request;
  request.set_completion(handle_);
  v1::CompletionEvent event;
  if (!runtime_->connection().stub().PollCompletion(&context, request, &event).ok()) return false;
  return absorb(event);
}

std::optional<Status> DaemonCompletion::result() const {
  if (!poll()) return std::nullopt;
  if (ring_ticket_ && runtime_->connection().ring()->poll(*ring_ticket_))
    return runtime_->connection().ring()->outcome(*ring_ticket_);
  return cached();
}

void DaemonCompletion::cancel() noexcept {
  if (DaemonRing* ring = runtime_->connection().ring(); ring != nullptr && ring->cancel(handle_).ok()) return;
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  v1::CancelRequest request;
  request.set_completion(handle_);
  v1::CancelResponse response;
  (void)runtime_->connection().stub().Cancel(&context, request, &response);
}

std::optional<CompletionProfile> DaemonCompletion::profile() const {
  if (!poll()) return std::nullopt;
  if (ring_ticket_ && runtime_->connection().ring()->poll(*ring_ticket_))
    return runtime_->connection().ring()->profile(*ring_ticket_);
  std::lock_guard lock(mu_);
  return profile_;
}

const void* DaemonCompletion::domain() const noexcept { return runtime_; }

}  // namespace accord::detail
