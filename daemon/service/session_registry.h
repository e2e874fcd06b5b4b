// Every live session of the daemon, by token and by id. The session channel server
// adds and closes sessions; the gRPC service looks them up by the token in a call's
// metadata. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/service/service_session.h"

namespace accord::service {

class SessionRegistry {
 public:
  explicit SessionRegistry(std::size_t max_sessions) : max_sessions_(max_sessions) {}

  // Busy when max_sessions are open; Unsupported when the registry refuses new sessions
  // (the daemon is stopping).
  Status add(std::shared_ptr<ServiceSession> session);
  std::shared_ptr<ServiceSession> find_by_token(const std::string& token) const;
  // Removes and closes the session (its handles are released).
  void close(std::uint64_t session_id);
  // Refuses new sessions from now on and closes every open one.
  void close_all();
  std::vector<std::shared_ptr<ServiceSession>> list() const;
  std::size_t size() const;

 private:
  const std::size_t max_sessions_;
  mutable std::mutex mu_;
  bool refusing_ = false;
  std::unordered_map<std::string, std::shared_ptr<ServiceSession>> by_token_;
  std::unordered_map<std::uint64_t, std::string> token_of_;
};

}  // namespace accord::service
