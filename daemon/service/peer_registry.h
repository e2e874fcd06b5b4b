// Who is on the other end of each gRPC connection. accordd accepts the control-plane
// socket itself, reads SO_PEERCRED and hands the fd to gRPC, whose calls then report
// peer() == "fd:N"; this map turns that back into credentials. Fd numbers are reused,
// so every accept overwrites the entry. Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "proto/wire/session_channel.h"

namespace accord::service {

class PeerRegistry {
 public:
  void set(int fd, const wire::PeerCredentials& peer);
  // Credentials for a gRPC peer string ("fd:12"), or empty for anything else.
  std::optional<wire::PeerCredentials> find(const std::string& grpc_peer) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<int, wire::PeerCredentials> by_fd_;
};

}  // namespace accord::service
