// sendmsg/recvmsg with one SCM_RIGHTS descriptor, shared by the session channel and the
// GPU executor channel so that the descriptor-ownership rules live in one place.
#include "proto/wire/fd_socket.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace accord::wire {
namespace {

// Enough room to see that a peer passed more than one fd: all of them are taken and
// closed. A peer passing even more sets MSG_CTRUNC, and the kernel closes the rest.
constexpr std::size_t kMaxReceivedFds = 16;
constexpr std::size_t kMaxParts = 8;

Status system_error(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS) return busy_error(std::move(message));
  return invalid_error(std::move(message));
}

Status closed_error(std::string_view channel, const char* call, int err) {
  return invalid_error(std::string(channel) + " channel closed (" + call + ": " + std::strerror(err) + ")");
}

}  // namespace

Status send_record(int socket, std::span<const std::span<const std::byte>> parts, int fd, std::string_view channel) {
  if (parts.size() > kMaxParts) return internal_error(std::string(channel) + " record has too many parts");
  std::array<iovec, kMaxParts> iov{};
  std::size_t count = 0;
  std::size_t total = 0;
  for (std::span<const std::byte> part : parts) {
    if (part.empty()) continue;
    iov[count++] = {const_cast<std::byte*>(part.data()), part.size()};  // sendmsg only reads it
    total += part.size();
  }
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = count;
  union {
    cmsghdr align;
    char bytes[CMSG_SPACE(sizeof(int))];
  } control{};
  if (fd >= 0) {
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof(control.bytes);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  }
  for (;;) {
    const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (sent >= 0) {
      // Only a SOCK_STREAM socket can take part of a record; a half-sent one would
      // desynchronise the peer.
      if (static_cast<std::size_t>(sent) != total)
        return invalid_error(std::string(channel) + " channel took " + std::to_string(sent) + " of " +
                             std::to_string(total) + " bytes of a message; use SOCK_SEQPACKET");
      return Status();
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) return closed_error(channel, "sendmsg", err);
    if (err == EAGAIN || err == EWOULDBLOCK) return busy_error(std::string(channel) + " channel is full; try again");
    return system_error("sendmsg on " + std::string(channel) + " channel", err);
  }
}

Result<std::optional<ReceivedRecord>> receive_record(int socket, std::span<std::byte> buffer, std::size_t max_bytes,
                                                     std::string_view channel) {
  if (buffer.size() <= max_bytes) return internal_error(std::string(channel) + " receive buffer is too small");
  union {
    cmsghdr align;
    char bytes[CMSG_SPACE(sizeof(int) * kMaxReceivedFds)];
  } control{};
  iovec iov{buffer.data(), buffer.size()};
  msghdr msg{};
  ssize_t received = 0;
  for (;;) {
    // recvmsg rewrites msg_controllen and msg_flags, so every attempt starts afresh.
    msg = msghdr{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof(control.bytes);
    received = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (received >= 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return busy_error("no message waiting");
    if (err == ECONNRESET) return closed_error(channel, "recvmsg", err);
    return system_error("recvmsg on " + std::string(channel) + " channel", err);
  }

  // Own every passed descriptor before any check: each early return below (and the
  // caller's) then closes them, which is how a malformed record never leaks an fd.
  ReceivedRecord record;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));  // CMSG_DATA may be unaligned
      UniqueFd owned(fd);
      if (record.fds_passed++ == 0) record.fd = std::move(owned);
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0)
    return invalid_error(std::string(channel) + " message passed more file descriptors than fit (" +
                         std::to_string(record.fds_passed) + " received, the rest dropped); at most one is allowed");
  // A zero-length SOCK_SEQPACKET record reads like EOF; one carrying fds is not EOF.
  if (received == 0 && record.fds_passed == 0) return std::optional<ReceivedRecord>();
  record.bytes = static_cast<std::size_t>(received);
  if ((msg.msg_flags & MSG_TRUNC) != 0 || record.bytes > max_bytes)
    return invalid_error(std::string(channel) + " message is larger than " + std::to_string(max_bytes) +
                         " bytes (truncated)");
  return std::optional<ReceivedRecord>(std::move(record));
}

}  // namespace accord::wire
