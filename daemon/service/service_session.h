// One client's session as the service sees it: the engine session, the client's
// credentials, and the session-scoped handle tables that map the integers a client
// sends to engine objects. Every lookup goes through here, so a handle of another
// session, or of another kind, is simply not found.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <string>
#include <unordered_map>

#include "accord/status.h"
#include "daemon/engine/engine.h"
#include "daemon/service/completion_table.h"
#include "proto/wire/session_channel.h"

namespace accord::service {

class ServiceSession {
 public:
  ServiceSession(engine::Ref<engine::Session> session, wire::PeerCredentials peer, std::string label,
                 std::string token, std::size_t max_objects);
  ~ServiceSession();

  engine::Session& engine_session() const noexcept { return *session_; }
  const wire::PeerCredentials& peer() const noexcept { return peer_; }
  const std::string& label() const noexcept { return label_; }
  const std::string& token() const noexcept { return token_; }
  std::uint64_t id() const noexcept { return session_->id(); }
  std::size_t max_objects() const noexcept { return max_objects_; }
  std::chrono::steady_clock::time_point created() const noexcept { return created_; }

  // Adds an object and returns its new handle. Busy when the session holds
  // max_objects handles. Invalid once the session is closed.
  Result<std::uint64_t> add_buffer(engine::Ref<engine::Allocation> allocation);
  Result<std::uint64_t> add_kernel(engine::Ref<engine::Kernel> kernel);
  Result<std::uint64_t> add_graph(engine::Ref<engine::PreparedGraph> graph);
  // Reserves a completion handle (it counts toward max_objects) before the engine
  // accepts a run, so a refused reservation never leaves a run that nobody can see.
  Result<std::uint64_t> reserve_completion();
  // Fills a reservation with the observer reference a submit returned.
  void fill_completion(std::uint64_t handle, engine::Submission* submission);
  // Gives back a reservation whose submit was refused.
  void cancel_reservation(std::uint64_t handle);

  // Code images uploaded on the session channel (too large for one gRPC message), held
  // until one LoadKernel takes them. Busy beyond kMaxUploads pending uploads.
  static constexpr std::size_t kMaxUploads = 8;
  Result<std::uint64_t> add_upload(std::vector<std::byte> image);
  // Removes and returns the upload; empty when this session holds no such upload.
  std::optional<std::vector<std::byte>> take_upload(std::uint64_t upload);

  // Lookups return null for a handle this session does not hold (of that kind); the
  // service answers NOT_FOUND, so another session's handles are indistinguishable from
  // unknown ones.
  engine::Ref<engine::Allocation> buffer(std::uint64_t handle) const;
  engine::Ref<engine::Kernel> kernel(std::uint64_t handle) const;
  engine::Ref<engine::PreparedGraph> graph(std::uint64_t handle) const;
  // Adds an observer reference for the caller (release with release_observer()).
  engine::Submission* retain_completion(std::uint64_t handle) const;

  bool remove_buffer(std::uint64_t handle);
  bool remove_kernel(std::uint64_t handle);
  bool remove_graph(std::uint64_t handle);
  bool remove_completion(std::uint64_t handle);

  // Leases held through the control plane (gRPC or the ring), recorded so a dying
  // client never leaves one behind. The caller looked buffer `handle` up already and
  // passes what it found as `allocation`. Errors: the engine's (Scheduler::acquire_lease);
  // Invalid when the session closed or the handle was freed meanwhile (nothing is held).
  Status acquire_lease(std::uint64_t handle, engine::Allocation& allocation, bool write, bool block);
  // The same without blocking, for callers that cannot wait (the ring): true when held
  // now; false when `waiter` was queued, and then its owner calls lease_granted() once
  // told OK. Errors as above.
  Result<bool> acquire_lease_or_wait(std::uint64_t handle, engine::Allocation& allocation, bool write,
                                     engine::LeaseWaiter& waiter);
  // Records a lease the engine granted to a waiter (see above). When the session closed
  // or `handle` no longer names `allocation`, releases it at once and returns Invalid.
  Status lease_granted(std::uint64_t handle, engine::Allocation& allocation, bool write);
  // Takes a waiter queued by acquire_lease_or_wait() back (engine::Session::cancel_lease_wait).
  bool cancel_lease_wait(engine::LeaseWaiter& waiter) noexcept { return session_->cancel_lease_wait(waiter); }
  // Invalid when the session holds no such lease.
  Status release_lease(std::uint64_t handle, bool write);

  struct Counts {
    std::size_t buffers = 0, kernels = 0, graphs = 0, completions = 0;
  };
  Counts counts() const;

  // The session ended (channel closed or daemon stopping): releases leases, observers
  // and every handle. In-flight work keeps what it touches until it finishes.
  void close() noexcept;
  bool closed() const;

 private:
  // Invalid once closed; Busy at max_objects handles of every kind.
  Status check_room_locked() const;
  // A new handle for a buffer, kernel or graph, after check_room_locked().
  Result<std::uint64_t> admit_locked();

  engine::Ref<engine::Session> session_;
  wire::PeerCredentials peer_;
  std::string label_;
  std::string token_;
  std::size_t max_objects_;
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();

  mutable std::mutex mu_;
  bool closed_ = false;
  std::uint64_t next_handle_ = 1;  // buffers, kernels, graphs, uploads; completions: completion_table.h
  std::unordered_map<std::uint64_t, engine::Ref<engine::Allocation>> buffers_;
  std::unordered_map<std::uint64_t, engine::Ref<engine::Kernel>> kernels_;
  std::unordered_map<std::uint64_t, engine::Ref<engine::PreparedGraph>> graphs_;
  CompletionTable completions_;  // one observer each
  std::unordered_map<std::uint64_t, std::vector<std::byte>> uploads_;
  struct LeaseCount {
    std::uint32_t reads = 0;
    bool write = false;
  };
  std::unordered_map<std::uint64_t, LeaseCount> leases_;  // by buffer handle; empty records kept until freed
};

}  // namespace accord::service
