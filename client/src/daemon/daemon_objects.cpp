#include "client/src/daemon/daemon_objects.h"

#include <sys/mman.h>

#include <array>

#include "client/src/daemon/daemon_release.h"
#include "client/src/daemon/daemon_runtime.h"

namespace accord::detail {

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
    if (accepted) return Completion(runtime_->ring_completions().take(*runtime_, accepted->ticket, accepted->handle), runtime_);
  }
  v1::SubmitRequest request;
  request.set_graph(handle_);
  for (const Completion& producer : after) request.add_after(static_cast<DaemonCompletion*>(producer.impl())->handle());
  grpc::ClientContext context;
  runtime_->connection().prepare(context);
  v1::SubmitResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(runtime_->connection().stub().Submit(&context, request, &response), "Submit"));
  return Completion(DaemonCompletion::for_grpc(*runtime_, response.completion()), runtime_);
}

}  // namespace accord::detail
