// accordctl's link to accordd: the gRPC channel over the Unix socket, and, for commands
// that need one, a session opened on the session channel whose token every later call
// carries. Failures come back as Status whose message is the complete line to print on
// stderr ("INVALID_ARGUMENT: graph node 3 binding 1: ...", "cannot reach accordd at
// /run/accord/accord.sock: ..."); accordctl exits 1 with it. One thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "accord/status.h"
#include "accord/v1/accord.grpc.pb.h"
#include "client/tools/accordctl/rpc_errors.h"
#include "client/api/unique_fd.h"

namespace accord::ctl {

// The global command-line options, resolved (environment defaults applied).
struct GlobalOptions {
  std::string socket;          // gRPC control plane
  std::string session_socket;  // session channel
  bool json = false;           // machine-readable output
  double timeout_seconds = 5;  // deadline of each call and of the session handshake
};

class Connection {
 public:
  // Creates the channel; nothing connects until the first call, so an absent daemon
  // shows up as that call's "cannot reach accordd" failure.
  explicit Connection(GlobalOptions options);
  // Says Goodbye on an open session channel, then closes it: the daemon releases
  // everything the session owned (ARCHITECTURE.md: the session lives as long as it).
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const GlobalOptions& options() const noexcept { return options_; }

  // Connects the session channel, sends Hello with `label` (shown by `accordctl
  // sessions`) and waits up to the timeout for Welcome; later calls carry its token.
  // Fails when nothing listens, the daemon refuses the uid, or no Welcome comes.
  // Blocks. Call at most once.
  Status open_session(std::string_view label);
  std::uint64_t session_id() const noexcept { return session_id_; }

  // One unary call with the deadline (and the session token when a session is open).
  // `context` prefixes the daemon's message ("buffer 'x'"); may be empty. Blocks.
  template <class Request, class Response>
  Result<Response> call(grpc::Status (v1::Accord::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                        const Request& request, std::string_view context = {}) {
    grpc::ClientContext client_context;
    prepare(client_context);
    Response response;
    const grpc::Status status = (stub_.get()->*method)(&client_context, request, &response);
    if (!status.ok()) return failure(status, context);
    return response;
  }

  // WaitCompletion: blocks until `completion` is terminal or the deadline passes, and
  // returns its terminal event (whatever the state; the caller judges it).
  Result<v1::CompletionEvent> wait_completion(std::uint64_t completion);

 private:
  void prepare(grpc::ClientContext& context) const;
  Status failure(const grpc::Status& status, std::string_view context) const;

  GlobalOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Accord::Stub> stub_;
  UniqueFd session_channel_;
  std::string token_;
  std::uint64_t session_id_ = 0;
};

}  // namespace accord::ctl
