#include "daemon/service/peer_registry.h"

#include <charconv>

namespace accord::service {

void PeerRegistry::set(int fd, const wire::PeerCredentials& peer) {
  std::lock_guard lock(mu_);
  by_fd_[fd] = peer;
}

std::optional<wire::PeerCredentials> PeerRegistry::find(const std::string& grpc_peer) const {
  constexpr std::string_view kPrefix = "fd:";
  if (grpc_peer.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  int fd = -1;
  const char* begin = grpc_peer.data() + kPrefix.size();
  const char* end = grpc_peer.data() + grpc_peer.size();
  if (std::from_chars(begin, end, fd).ec != std::errc()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

}  // namespace accord::service
