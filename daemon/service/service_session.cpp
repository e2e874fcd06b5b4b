#include "daemon/service/service_session.h"

namespace accord::service {

ServiceSession::ServiceSession(engine::Ref<engine::Session> session, wire::PeerCredentials peer,
                               std::string label, std::string token, std::size_t max_objects)
    : session_(std::move(session)),
      peer_(peer),
      label_(std::move(label)),
      token_(std::move(token)),
      max_objects_(max_objects) {}

ServiceSession::~ServiceSession() { close(); }

Status ServiceSession::check_room_locked() const {
  if (closed_) return invalid_error("session " + std::to_string(id()) + " is closed");
  const std::size_t held = buffers_.size() + kernels_.size() + graphs_.size() + completions_.size();
  if (held >= max_objects_)
    return busy_error("session holds " + std::to_string(held) + " objects, the limit (max_objects)");
  return Status();
}

Result<std::uint64_t> ServiceSession::admit_locked() {
  ACCORD_RETURN_IF_ERROR(check_room_locked());
  return next_handle_++;
}

Result<std::uint64_t> ServiceSession::add_buffer(engine::Ref<engine::Allocation> allocation) {
  std::lock_guard lock(mu_);
  ACCORD_ASSIGN_OR_RETURN(const std::uint64_t handle, admit_locked());
  buffers_.emplace(handle, std::move(allocation));
  return handle;
}

Result<std::uint64_t> ServiceSession::add_kernel(engine::Ref<engine::Kernel> kernel) {
  std::lock_guard lock(mu_);
  ACCORD_ASSIGN_OR_RETURN(const std::uint64_t handle, admit_locked());
  kernels_.emplace(handle, std::move(kernel));
  return handle;
}

Result<std::uint64_t> ServiceSession::add_graph(engine::Ref<engine::PreparedGraph> graph) {
  std::lock_guard lock(mu_);
  ACCORD_ASSIGN_OR_RETURN(const std::uint64_t handle, admit_locked());
  graphs_.emplace(handle, std::move(graph));
  return handle;
}

Result<std::uint64_t> ServiceSession::reserve_completion() {
  std::lock_guard lock(mu_);
  ACCORD_RETURN_IF_ERROR(check_room_locked());
  // A reservation: invisible to lookups until filled. Its handle comes from the table,
  // not next_handle_ (completion_table.h says why they never collide).
  const std::uint64_t handle = completions_.reserve();
  return handle;
}

void ServiceSession::fill_completion(std::uint64_t handle, engine::Submission* submission) {
  {
    std::lock_guard lock(mu_);
    if (completions_.fill(handle, submission)) return;
  }
  submission->release_observer();  // the session closed meanwhile
}

void ServiceSession::cancel_reservation(std::uint64_t handle) {
  std::lock_guard lock(mu_);
  completions_.cancel(handle);
}

engine::Ref<engine::Allocation> ServiceSession::buffer(std::uint64_t handle) const {
  std::lock_guard lock(mu_);
  auto it = buffers_.find(handle);
  return it == buffers_.end() ? nullptr : it->second;
}

engine::Ref<engine::Kernel> ServiceSession::kernel(std::uint64_t handle) const {
  std::lock_guard lock(mu_);
  auto it = kernels_.find(handle);
  return it == kernels_.end() ? nullptr : it->second;
}

engine::Ref<engine::PreparedGraph> ServiceSession::graph(std::uint64_t handle) const {
  std::lock_guard lock(mu_);
  auto it = graphs_.find(handle);
  return it == graphs_.end() ? nullptr : it->second;
}

engine::Submission* ServiceSession::retain_completion(std::uint64_t handle) const {
  std::lock_guard lock(mu_);
  engine::Submission* observer = completions_.find(handle);
  if (observer != nullptr) observer->retain_observer();
  return observer;
}

bool ServiceSession::remove_buffer(std::uint64_t handle) {
  engine::Ref<engine::Allocation> dropped;
  LeaseCount held;
  {
    std::lock_guard lock(mu_);
    auto it = buffers_.find(handle);
    if (it == buffers_.end()) return false;
    dropped = std::move(it->second);
    buffers_.erase(it);
    if (auto lease = leases_.find(handle); lease != leases_.end()) {
      held = lease->second;
      leases_.erase(lease);
    }
  }
  // Freeing a buffer ends the leases held through its handle; otherwise nothing could
  // ever release them and every graph using the memory would stay refused.
  if (held.write) session_->release_lease(*dropped, engine::LeaseMode::Write);
  for (std::uint32_t i = 0; i < held.reads; ++i) session_->release_lease(*dropped, engine::LeaseMode::Read);
  return true;
}

bool ServiceSession::remove_kernel(std::uint64_t handle) {
  std::lock_guard lock(mu_);
  return kernels_.erase(handle) == 1;
}

bool ServiceSession::remove_graph(std::uint64_t handle) {
  std::lock_guard lock(mu_);
  return graphs_.erase(handle) == 1;
}

bool ServiceSession::remove_completion(std::uint64_t handle) {
  engine::Submission* observer = nullptr;
  {
    std::lock_guard lock(mu_);
    observer = completions_.remove(handle);
    if (observer == nullptr) return false;
  }
  observer->release_observer();
  return true;
}

namespace {

engine::LeaseMode lease_mode(bool write) { return write ? engine::LeaseMode::Write : engine::LeaseMode::Read; }

}  // namespace

Status ServiceSession::acquire_lease(std::uint64_t handle, engine::Allocation& allocation, bool write,
                                     bool block) {
  ACCORD_RETURN_IF_ERROR(session_->acquire_lease(allocation, lease_mode(write), block));
  return lease_granted(handle, allocation, write);
}

Result<bool> ServiceSession::acquire_lease_or_wait(std::uint64_t handle, engine::Allocation& allocation, bool write,
                                                   engine::LeaseWaiter& waiter) {
  ACCORD_ASSIGN_OR_RETURN(const bool held, session_->acquire_lease_or_wait(allocation, lease_mode(write), waiter));
  if (!held) return false;
  ACCORD_RETURN_IF_ERROR(lease_granted(handle, allocation, write));
  return true;
}

Status ServiceSession::lease_granted(std::uint64_t handle, engine::Allocation& allocation, bool write) {
  {
    std::lock_guard lock(mu_);
    auto buffer = buffers_.find(handle);
    // A lease granted after the session closed or the buffer was freed (a waiting lease
    // outlives neither) could never be released through the handle: let it go now.
    if (!closed_ && buffer != buffers_.end() && buffer->second.get() == &allocation) {
      LeaseCount& count = leases_[handle];
      if (write) count.write = true;
      else ++count.reads;
      return Status();
    }
  }
  session_->release_lease(allocation, lease_mode(write));
  return invalid_error("buffer handle " + std::to_string(handle) + " was freed, or its session closed, while its " +
                       (write ? "write" : "read") + " lease waited");
}

Status ServiceSession::release_lease(std::uint64_t handle, bool write) {
  engine::Ref<engine::Allocation> allocation;
  {
    std::lock_guard lock(mu_);
    auto it = leases_.find(handle);
    if (it == leases_.end() || (write ? !it->second.write : it->second.reads == 0))
      return invalid_error(std::string("session holds no ") + (write ? "write" : "read") +
                           " lease on buffer handle " + std::to_string(handle));
    // The record stays, emptied, until the buffer goes (remove_buffer), so leasing the
    // same buffer again, as a ring client does in a loop, allocates nothing.
    if (write) it->second.write = false;
    else --it->second.reads;
    auto b = buffers_.find(handle);
    if (b != buffers_.end()) allocation = b->second;
  }
  if (allocation)
    session_->release_lease(*allocation, write ? engine::LeaseMode::Write : engine::LeaseMode::Read);
  return Status();
}

ServiceSession::Counts ServiceSession::counts() const {
  std::lock_guard lock(mu_);
  return {buffers_.size(), kernels_.size(), graphs_.size(), completions_.size()};
}

bool ServiceSession::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void ServiceSession::close() noexcept {
  std::unordered_map<std::uint64_t, engine::Ref<engine::Allocation>> buffers;
  std::unordered_map<std::uint64_t, engine::Ref<engine::Kernel>> kernels;
  std::unordered_map<std::uint64_t, engine::Ref<engine::PreparedGraph>> graphs;
  CompletionTable completions(0);  // allocates nothing: swapped in under the lock
  std::unordered_map<std::uint64_t, LeaseCount> leases;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    buffers.swap(buffers_);
    kernels.swap(kernels_);
    graphs.swap(graphs_);
    uploads_.clear();
    std::swap(completions, completions_);
    leases.swap(leases_);
  }
  // Leases first, so nothing the client held can block the session's remaining work.
  for (const auto& [handle, count] : leases) {
    auto it = buffers.find(handle);
    if (it == buffers.end()) continue;
    if (count.write) session_->release_lease(*it->second, engine::LeaseMode::Write);
    for (std::uint32_t i = 0; i < count.reads; ++i) session_->release_lease(*it->second, engine::LeaseMode::Read);
  }
  completions.drain([](engine::Submission* observer) { observer->release_observer(); });
  // The maps' destructors drop the handles; pending submissions retain what they touch.
}

Result<std::uint64_t> ServiceSession::add_upload(std::vector<std::byte> image) {
  std::lock_guard lock(mu_);
  if (closed_) return invalid_error("session is closed");
  if (uploads_.size() >= kMaxUploads)
    return busy_error("session holds " + std::to_string(kMaxUploads) + " code image uploads no LoadKernel took yet");
  const std::uint64_t handle = next_handle_++;
  uploads_.emplace(handle, std::move(image));
  return handle;
}

std::optional<std::vector<std::byte>> ServiceSession::take_upload(std::uint64_t upload) {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(upload);
  if (it == uploads_.end()) return std::nullopt;
  std::vector<std::byte> image = std::move(it->second);
  uploads_.erase(it);
  return image;
}

}  // namespace accord::service
