// The control plane's accept loop. gRPC 1.51 reports no peer credentials on a Unix
// socket, so accordd opens no gRPC listening port: it accepts connections itself
// (non-blocking, as gRPC needs), records SO_PEERCRED for the fd, and hands the fd to the
// server with AddInsecureChannelFromFd (platform-notes.md "gRPC on a Unix socket").
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/server.h>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "daemon/service/peer_registry.h"

namespace accord::service {

class GrpcListener {
 public:
  static Result<std::unique_ptr<GrpcListener>> start(const std::string& path, unsigned mode, grpc::Server& server,
                                                     PeerRegistry& peers);
  ~GrpcListener();  // stops accepting and joins
  void stop() noexcept;

 private:
  GrpcListener(grpc::Server& server, PeerRegistry& peers, UniqueFd listener, UniqueFd wake);
  void run();

  grpc::Server& server_;
  PeerRegistry& peers_;
  UniqueFd listener_;
  UniqueFd wake_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace accord::service
