// One client's link to accordd: the session channel (which defines the session's life
// and carries buffer fds) and the gRPC channel (every call carries the session token).
// Thread-safe: gRPC stubs are, and the session channel is used under a mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include <grpcpp/grpcpp.h>

#include "accord/runtime.h"
#include "accord/status.h"
#include "accord/v1/accord.grpc.pb.h"
#include "client/api/unique_fd.h"
#include "client/src/daemon/daemon_ring.h"

namespace accord::detail {

// accordd's answer as an accord::Status: the kind from the gRPC code (the inverse of
// the daemon's table), the message as the daemon wrote it.
Status from_grpc(const grpc::Status& status, std::string_view call);

class DaemonConnection {
 public:
  // Opens the session channel at `session_socket` (Hello -> Welcome, asking for the
  // limits in `options`; then OpenRing -> RingFd unless options.submission_ring is false)
  // and a gRPC channel to `grpc_socket`. DeviceLost when accordd
  // cannot be reached, with the path in the message.
  static Result<std::unique_ptr<DaemonConnection>> open(const std::string& grpc_socket,
                                                        const std::string& session_socket,
                                                        const RuntimeOptions& options);

  v1::Accord::Stub& stub() noexcept { return *stub_; }
  // A context for one call: session metadata and, when given, a deadline.
  void prepare(grpc::ClientContext& context) const;
  std::uint64_t session_id() const noexcept { return session_id_; }

  // Asks for the buffer's memfd on the session channel and maps it into this process.
  // Returns the mapping's address; the caller unmaps `map_bytes` when done.
  Result<std::byte*> map_buffer(std::uint64_t handle, std::size_t& map_bytes);
  // Uploads a code image too large for one gRPC message: a sealed memfd (shrink, grow,
  // write, seal) on the session channel. Returns the upload id LoadKernelRequest
  // references. Busy when a memfd cannot be made; accordd's refusal otherwise.
  Result<std::uint64_t> upload_image(std::span<const std::byte> image);
  // The largest gRPC request accordd accepts (from Welcome; 0 from an older accordd).
  std::uint64_t max_message_bytes() const noexcept { return max_message_bytes_; }
  // The priority accordd granted this session.
  int priority() const noexcept { return priority_; }
  // `asked` with the limits accordd granted (Welcome) in place of those asked for:
  // max_submissions, graph_slots, memory_budget and priority. What Runtime::options()
  // reports over this transport.
  RuntimeOptions granted(const RuntimeOptions& asked) const;
  // The session's submission ring, or null (RuntimeOptions::submission_ring false, or an
  // accordd without rings).
  DaemonRing* ring() const noexcept { return ring_.get(); }

 private:
  DaemonConnection() = default;
  Status open_ring(std::uint64_t max_submissions, std::chrono::microseconds spin, bool forecast_sleep);
  UniqueFd session_;
  std::mutex session_mu_;
  std::uint32_t next_request_ = 1;
  std::uint64_t session_id_ = 0;
  std::string token_;
  std::uint64_t max_message_bytes_ = 0;
  int priority_ = 0;
  std::uint64_t max_submissions_ = 0;  // granted (Welcome)
  std::uint64_t graph_slots_ = 0;
  std::uint64_t memory_budget_ = 0;    // 0: none
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Accord::Stub> stub_;
  std::unique_ptr<DaemonRing> ring_;  // after session_: watches it while waiting
};

}  // namespace accord::detail
