// The session channel's server side: accepts SOCK_SEQPACKET connections, checks the
// peer's uid, opens a session on Hello (answering Welcome with its token), serves
// MapBuffer with the buffer's sealed memfd, takes code images too large for gRPC as sealed
// memfds (CodeImage), hands out the session's submission ring (OpenRing), and closes the
// session (and its ring) when the connection ends, whether the client exited or crashed.
// One thread with poll().
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "daemon/engine/engine.h"
#include "daemon/service/access_policy.h"
#include "daemon/service/daemon.h"
#include "daemon/service/ring_service.h"
#include "daemon/service/session_registry.h"

namespace accord::service {

struct SessionChannelOptions {
  std::string path;
  unsigned mode = 0660;
  engine::SessionLimits limits;
  std::size_t max_objects = 4096;
  PriorityPolicy priorities;              // what each uid/gid may ask for
  std::vector<std::uint32_t> isolated_uids;  // sessions with GPU executors of their own
  std::vector<std::uint32_t> isolated_gids;
  std::uint64_t max_message_bytes = 0;    // told to clients in Welcome
};

class SessionChannelServer {
 public:
  // Listens on `options.path`; Invalid/Unsupported when the socket cannot be created.
  static Result<std::unique_ptr<SessionChannelServer>> start(const SessionChannelOptions& options,
                                                             engine::Engine& engine, SessionRegistry& sessions,
                                                             const AccessPolicy& policy, RingService& rings);
  // Stops accepting, closes every connection (and so every session), joins the thread.
  ~SessionChannelServer();
  void stop() noexcept;

 private:
  SessionChannelServer(SessionChannelOptions options, engine::Engine& engine, SessionRegistry& sessions,
                       const AccessPolicy& policy, RingService& rings, UniqueFd listener, UniqueFd wake);
  void run();
  void accept_one();
  // Returns false when the connection should be closed.
  bool serve(int fd);
  bool handle_hello(int fd, const wire::ReceivedMessage& message);
  bool handle_map(int fd, const wire::ReceivedMessage& message);
  // A sealed memfd with a code image: checks the seals and size, copies the bytes into
  // the session's uploads and answers CodeImageUploaded.
  bool handle_code_image(int fd, const wire::ReceivedMessage& message);
  // OpenRing: opens the session's submission ring and answers RingFd with its memfd.
  bool handle_open_ring(int fd, const wire::ReceivedMessage& message);
  void drop(int fd);

  struct Connection {
    UniqueFd socket;
    wire::PeerCredentials peer;
    std::shared_ptr<ServiceSession> session;  // empty until Hello
    bool refused = false;  // uid not allowed: answer its first message with the reason
  };

  SessionChannelOptions options_;
  engine::Engine& engine_;
  SessionRegistry& sessions_;
  const AccessPolicy& policy_;
  RingService& rings_;
  UniqueFd listener_;
  UniqueFd wake_;  // eventfd that stop() signals
  std::unordered_map<int, Connection> connections_;  // owned by the thread
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace accord::service
