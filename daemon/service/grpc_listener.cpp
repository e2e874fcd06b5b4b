#include "daemon/service/grpc_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <cstring>

#include <grpcpp/server_posix.h>
#include <spdlog/spdlog.h>

#include "proto/wire/session_channel.h"
#include "client/api/thread_name.h"

namespace accord::service {

Result<std::unique_ptr<GrpcListener>> GrpcListener::start(const std::string& path, unsigned mode,
                                                          grpc::Server& server, PeerRegistry& peers) {
  auto listener = wire::listen_unix(path, SOCK_STREAM, mode);
  if (!listener.ok()) return std::move(listener).status().annotate("gRPC socket " + path);
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return internal_error("eventfd for the gRPC listener failed");
  return std::unique_ptr<GrpcListener>(new GrpcListener(server, peers, std::move(listener).value(), std::move(wake)));
}

GrpcListener::GrpcListener(grpc::Server& server, PeerRegistry& peers, UniqueFd listener,
                           UniqueFd wake)
    : server_(server), peers_(peers), listener_(std::move(listener)), wake_(std::move(wake)) {
  thread_ = std::thread([this] { run(); });
}

GrpcListener::~GrpcListener() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void GrpcListener::stop() noexcept {
  if (stopping_.exchange(true)) return;
  const std::uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
}

void GrpcListener::run() {
  name_this_thread("accord-grpc-in");
  while (!stopping_.load()) {
    pollfd fds[2] = {{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("gRPC listener poll failed: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents) return;
    if (!(fds[1].revents & POLLIN)) continue;
    // Non-blocking: a blocking fd stalls gRPC before the HTTP/2 SETTINGS frame.
    auto accepted = wire::accept_unix(listener_.get(), /*nonblocking=*/true);
    if (!accepted.ok() || !accepted.value()) continue;
    UniqueFd socket = std::move(*accepted.value());
    auto peer = wire::peer_credentials(socket.get());
    if (!peer.ok()) continue;
    // Recorded before gRPC sees the fd, so the first call already finds it. Refused
    // uids still get a channel: every call then answers PERMISSION_DENIED with the reason,
    // which tells a client far more than a closed socket.
    peers_.set(socket.get(), peer.value());
    grpc::AddInsecureChannelFromFd(&server_, socket.release());
  }
}

}  // namespace accord::service
