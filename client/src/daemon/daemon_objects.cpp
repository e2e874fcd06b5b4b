#include "client/src/daemon/daemon_objects.h"

#include <sys/mman.h>

#include <array>

#include "client/src/daemon/daemon_runtime.h"

namespace accord::detail {
namespace {

// Releases a handle; failures (the daemon already gone) are ignored on purpose: the
// session's end releases everything anyway.
template <class Request, class Response, class Call>
void release_handle(DaemonRuntime& runtime, Request request, Call call) {
  grpc::ClientContext context;
  runtime.connection().prepare(context);
  Response response;
  (void)(runtime.connection().stub().*call)(&context, request, &response);
}

}  // namespace

// ---------------------------------------------------------------- buffers

DaemonBuffer::DaemonBuffer(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle, std::size_t bytes,
                           MemoryPlacement placement, std::byte* mapping, std::size_t map_bytes)
    : runtime_(std::move(runtime)),
      handle_(handle),
      bytes_(bytes),
      placement_(placement),
      mapping_(mapping),
      map_bytes_(map_bytes) {}

DaemonBuffer::~DaemonBuffer() {
  if (mapping_) munmap(mapping_, map_bytes_);
  v1::FreeRequest request;
  request.set_buffer(handle_);
  release_handle<v1::FreeRequest, v1::FreeResponse>(*runtime_, request, &v1::Accord::Stub::Free);
}

const RuntimeImpl* DaemonBuffer::runtime() const noexcept { return runtime_.get(); }

Status DaemonBuffer::acquire(LeaseMode mode, bool block) {
  // The ring when accordd serves leases there and a ticket is free; gRPC otherwise. Both
  // reach the same lease table, so either may end a lease the other began. The engine
  // leases whole allocations, so the range is the whole buffer.
  if (DaemonRing* ring = runtime_->connection().ring(); ring != nullptr && ring->serves_leases()) {
    ACCORD_ASSIGN_OR_RETURN(const std::optional<std::uint64_t> lease,
                            ring->acquire_lease(handle_, 0, bytes_, mode == LeaseMode::Write, block));
    if (lease) return Status();
  }
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  v1::AcquireLeaseRequest request;
  request.set_buffer(handle_);
  request.set_write(mode == LeaseMode::Write);
  request.set_wait(block);
  v1::AcquireLeaseResponse response;
  return from_grpc(runtime_->connection().stub().AcquireLease(&context, request, &response), "AcquireLease");
}

void DaemonBuffer::release(LeaseMode mode) noexcept {
  if (DaemonRing* ring = runtime_->connection().ring(); ring != nullptr && ring->serves_leases()) {
    // ring_layout.h: a lease's handle is (buffer << 1) | write. A full ring or no free
    // ticket falls back to gRPC; a refusal or a lost accordd is ignored as gRPC's is.
    auto released = ring->release_lease((handle_ << 1) | (mode == LeaseMode::Write ? 1u : 0u));
    if (!released.ok() && released.status().kind() != ErrorKind::Busy) return;
    if (released.ok() && released.value()) return;
  }
  v1::ReleaseLeaseRequest request;
  request.set_buffer(handle_);
  request.set_write(mode == LeaseMode::Write);
  release_handle<v1::ReleaseLeaseRequest, v1::ReleaseLeaseResponse>(*runtime_, request,
                                                                    &v1::Accord::Stub::ReleaseLease);
}

// ---------------------------------------------------------------- kernels

DaemonKernel::DaemonKernel(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle, std::string name,
                           KernelContract contract, DeviceId device)
    : runtime_(std::move(runtime)),
      handle_(handle),
      name_(std::move(name)),
      contract_(std::move(contract)),
      device_(device) {}

DaemonKernel::~DaemonKernel() {
  v1::ReleaseKernelRequest request;
  request.set_kernel(handle_);
  release_handle<v1::ReleaseKernelRequest, v1::ReleaseKernelResponse>(*runtime_, request,
                                                                      &v1::Accord::Stub::ReleaseKernel);
}

const RuntimeImpl* DaemonKernel::runtime() const noexcept { return runtime_.get(); }

// ---------------------------------------------------------------- completions

DaemonCompletion::DaemonCompletion(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle,
                                   std::optional<std::uint32_t> ring_ticket)
    : runtime_(std::move(runtime)), handle_(handle), ring_ticket_(ring_ticket) {}

void DaemonCompletion::release_observer() noexcept {
  if (observers_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (DaemonRing* ring = runtime_->connection().ring(); ring != nullptr) {
    if (ring_ticket_) ring->forget(*ring_ticket_);
    // Ahead of any later submission in the ring, so the graph slot it frees is free
    // when that submission arrives. A full ring falls back to the gRPC call.
    if (ring->release(handle_).ok()) {
      delete this;
      return;
    }
  }
  v1::ReleaseCompletionRequest request;
  request.set_completion(handle_);
  release_handle<v1::ReleaseCompletionRequest, v1::ReleaseCompletionResponse>(
      *runtime_, request, &v1::Accord::Stub::ReleaseCompletion);
  delete this;
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

const void* DaemonCompletion::domain() const noexcept { return runtime_.get(); }

// ---------------------------------------------------------------- graphs

DaemonGraph::DaemonGraph(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle)
    : runtime_(std::move(runtime)), handle_(handle) {}

DaemonGraph::~DaemonGraph() {
  v1::ReleaseGraphRequest request;
  request.set_graph(handle_);
  release_handle<v1::ReleaseGraphRequest, v1::ReleaseGraphResponse>(*runtime_, request,
                                                                    &v1::Accord::Stub::ReleaseGraph);
}

Result<Completion> DaemonGraph::submit_after(std::span<const Completion> after) {
  std::array<std::uint64_t, DaemonRing::kMaxProducers> producers{};
  for (std::size_t i = 0; i < after.size(); ++i) {
    CompletionImpl* impl = after[i].impl();
    if (impl == nullptr) return invalid_error("producer " + std::to_string(i) + " is an empty completion");
    if (impl->domain() != runtime_.get())
      return invalid_error("producer " + std::to_string(i) + " belongs to another runtime");
    if (i < producers.size()) producers[i] = static_cast<DaemonCompletion*>(impl)->handle();
  }
  // Through the ring when it can carry the producers and has a ticket free; gRPC otherwise
  // (the request message is built only then: the ring's path is every small submission's).
  if (DaemonRing* ring = runtime_->connection().ring(); ring != nullptr && after.size() <= producers.size()) {
    ACCORD_ASSIGN_OR_RETURN(const std::optional<DaemonRing::Accepted> accepted,
                            ring->submit(handle_, std::span(producers.data(), after.size())));
    if (accepted) return Completion(new DaemonCompletion(runtime_, accepted->handle, accepted->ticket), runtime_);
  }
  v1::SubmitRequest request;
  request.set_graph(handle_);
  for (const Completion& producer : after) request.add_after(static_cast<DaemonCompletion*>(producer.impl())->handle());
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  v1::SubmitResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(runtime_->connection().stub().Submit(&context, request, &response), "Submit"));
  return Completion(new DaemonCompletion(runtime_, response.completion()), runtime_);
}

}  // namespace accord::detail
