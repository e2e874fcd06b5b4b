// Whether the process at the other end of a Unix socket (accordd, for a client) runs
// ahead of this one on the CPU: at a lower nice value, as accordd's systemd unit sets
// (Nice=-10). A client that waits for accordd may then spin on a busy machine, since the
// scheduler preempts the spinner whenever one of accordd's threads becomes runnable.
#pragma once

namespace accord::wire {

// False when it cannot tell: no peer credentials (peer_credentials), a peer in another
// PID namespace (pid 0), or a process that has gone. Never throws; one getsockopt and
// two getpriority calls.
bool peer_runs_ahead(int unix_socket) noexcept;

}  // namespace accord::wire
