#include "proto/wire/peer_priority.h"

#include <sys/resource.h>

#include <cerrno>

#include "proto/wire/session_channel.h"

namespace accord::wire {
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
  const Result<PeerCredentials> peer = peer_credentials(unix_socket);
  if (!peer.ok() || peer.value().pid <= 0) return false;
  int theirs = 0;
  int ours = 0;
  return nice_of(peer.value().pid, theirs) && nice_of(0, ours) && theirs < ours;
}

}  // namespace accord::wire
