#include "client/api/peer_priority.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <cerrno>

namespace accord {
namespace {

// The nice value of `pid` (0: this process), or false when it cannot be read: -1 is
// also a valid nice value, so errno tells.
bool nice_of(int pid, int& nice) noexcept {
  errno = 0;
  const int value = ::getpriority(PRIO_PROCESS, static_cast<id_t>(pid));
  if (value == -1 && errno != 0) return false;
  nice = value;
  return true;
}

}  // namespace

bool peer_runs_ahead(int unix_socket) noexcept {
  ucred peer{};
  socklen_t length = sizeof(peer);
  if (::getsockopt(unix_socket, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.pid <= 0) return false;
  int theirs = 0;
  int ours = 0;
  return nice_of(peer.pid, theirs) && nice_of(0, ours) && theirs < ours;
}

}  // namespace accord
