// Sending and receiving session-channel messages over a SOCK_SEQPACKET socket, with
// at most one file descriptor per message (SCM_RIGHTS, received with MSG_CMSG_CLOEXEC).
// Every function validates what it reads: a peer can send anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "proto/wire/session_messages.h"

namespace accord::wire {

struct PeerCredentials {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int32_t pid = 0;
};

struct ReceivedMessage {
  MessageHeader header;
  std::array<std::byte, kMaxMessageBytes> payload{};
  std::size_t payload_bytes = 0;
  UniqueFd fd;  // the passed descriptor, if any

  MessageType type() const noexcept { return static_cast<MessageType>(header.type); }
  // Decodes the payload as `T`. Invalid when the size differs from sizeof(T).
  template <class T>
  Result<T> as() const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (payload_bytes != sizeof(T))
      return invalid_error("session message of type " + std::to_string(header.type) + " has " +
                           std::to_string(payload_bytes) + " payload bytes, expected " +
                           std::to_string(sizeof(T)));
    T value;
    std::memcpy(&value, payload.data(), sizeof(T));
    return value;
  }
};

// Sends one message (header + `payload`), passing `fd` along when it is >= 0; the
// caller keeps ownership of `fd` (the peer receives its own copy). Uses MSG_NOSIGNAL: a
// closed peer is an Invalid("session channel closed ...") status, never SIGPIPE.
// Invalid when `payload` exceeds kMaxMessageBytes - sizeof(MessageHeader). Blocks on a
// blocking socket; Busy when a non-blocking socket's buffer is full. One sendmsg per
// message, so concurrent senders never interleave bytes of two messages.
Status send_message(int socket, MessageType type, std::uint32_t request_id,
                    std::span<const std::byte> payload, int fd = -1);

template <class T>
Status send_payload(int socket, MessageType type, std::uint32_t request_id, const T& payload, int fd = -1) {
  static_assert(std::is_trivially_copyable_v<T>);
  return send_message(socket, type, request_id,
                      std::span<const std::byte>(reinterpret_cast<const std::byte*>(&payload), sizeof(T)), fd);
}

// Receives one message. Returns an empty optional when the peer closed the channel
// (orderly EOF; a zero-length message reads the same). Invalid for a truncated message,
// a bad magic or version, a payload size that disagrees with the header, or more than
// one passed fd; every fd that came with a rejected message is closed, never leaked.
// The type is not checked: the caller answers an unknown type with an Error for its
// `request_id`. Passed fds arrive close-on-exec. Blocks on a blocking socket; Busy("no
// message waiting") on a non-blocking one with nothing to read. Owner thread only.
Result<std::optional<ReceivedMessage>> receive_message(int socket);

// SO_PEERCRED of a connected Unix socket: the peer's identity when it connected. The
// pid can be reused once the peer exits (no SO_PEERPIDFD on Debian 12's headers), so it
// is for logs, never for authorisation. Invalid for a socket that is not connected.
Result<PeerCredentials> peer_credentials(int socket);

// Unix sockets, all close-on-exec. Types: SOCK_SEQPACKET or SOCK_STREAM, optionally
// with SOCK_NONBLOCK (a listener polled by the daemon's loop). listen_unix removes a
// stale socket file at `path` first (Invalid, touching nothing, when something other
// than a socket is there) and applies `mode` (e.g. 0660) to the new one before it
// listens. Invalid when `path` is empty or does not fit in sun_path; Busy when out of
// descriptors.
Result<UniqueFd> listen_unix(const std::string& path, int type, unsigned mode, int backlog = 64);
// Unsupported when nothing listens at `path` (no daemon running).
Result<UniqueFd> connect_unix(const std::string& path, int type);
// accept4 with SOCK_CLOEXEC and, when `nonblocking`, SOCK_NONBLOCK on the accepted
// socket. Empty result when no connection is waiting (EAGAIN) on a non-blocking
// listener, and when the accept was interrupted or the connection aborted before it
// was taken (EINTR, ECONNABORTED): the caller polls again. Busy when out of descriptors.
Result<std::optional<UniqueFd>> accept_unix(int listener, bool nonblocking);

}  // namespace accord::wire
