// Records on a SOCK_SEQPACKET Unix socket, each carrying at most one file descriptor
// (SCM_RIGHTS, received close-on-exec): the transport under the session channel
// (session_channel.h) and accordd's channel to its GPU executors (daemon/executor).
// Every function validates what it reads: a peer can send anything. Thread-safety:
// sends are one sendmsg each (concurrent senders never interleave); receive from one
// thread per socket.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "accord/status.h"
#include "client/api/unique_fd.h"

namespace accord::wire {

struct ReceivedRecord {
  std::size_t bytes = 0;      // bytes written to the caller's buffer
  UniqueFd fd;                // the first passed descriptor, if any
  std::size_t fds_passed = 0; // how many came (all but `fd` already closed)
};

// Sends the concatenation of `parts` as one record, passing `fd` along when it is >= 0
// (the caller keeps its own copy). MSG_NOSIGNAL: a closed peer is Invalid("<channel>
// channel closed ..."), never SIGPIPE. Busy when a non-blocking socket is full or the
// kernel is out of memory. `channel` names the channel in messages ("session").
Status send_record(int socket, std::span<const std::span<const std::byte>> parts, int fd,
                   std::string_view channel);

// Receives one record of at most `max_bytes` into `buffer` (which must hold at least
// max_bytes + 1, so an oversize record shows up as a longer read). An empty optional on
// orderly EOF (a zero-length record without fds reads the same). Invalid for a record
// longer than `max_bytes` or one passing more descriptors than fit; every descriptor of
// a rejected record is closed. Busy("no message waiting") on a non-blocking socket with
// nothing to read.
Result<std::optional<ReceivedRecord>> receive_record(int socket, std::span<std::byte> buffer,
                                                     std::size_t max_bytes, std::string_view channel);

}  // namespace accord::wire
