#include "proto/wire/session_channel.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace accord::wire {
namespace {


// Enough room to see that a peer passed more than one fd: all of them are taken and
// closed. A peer passing even more sets MSG_CTRUNC, and the kernel closes the rest.
constexpr std::size_t kMaxReceivedFds = 16;
constexpr std::size_t kMaxPayloadBytes = kMaxMessageBytes - sizeof(MessageHeader);

static_assert(sizeof(MessageHeader) == 16, "the header is a wire format: no padding");

// Exhausting descriptors or kernel memory is a limit, not a bug (ARCHITECTURE.md,
// security model: exhausting a resource is Busy); anything else is a bad argument.
Status system_error(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS) return busy_error(std::move(message));
  return invalid_error(std::move(message));
}

Status closed_error(const char* call, int err) {
  return invalid_error(std::string("session channel closed (") + call + ": " + std::strerror(err) + ")");
}

Result<sockaddr_un> unix_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // A leading NUL would name the abstract namespace, which has no file mode to apply.
  if (path.empty() || path.find('\0') != std::string::npos)
    return invalid_error("Unix socket path '" + path + "' is empty or holds a NUL byte");
  if (path.size() >= sizeof(address.sun_path))
    return invalid_error("Unix socket path '" + path + "' is " + std::to_string(path.size()) +
                         " bytes; at most " + std::to_string(sizeof(address.sun_path) - 1) + " fit");
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

// Removes a socket file left by an earlier daemon, so that bind does not fail with
// EADDRINUSE. Anything else at `path` is a configuration mistake, and deleting it
// could destroy a user's file: refuse instead.
Status remove_stale_socket(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Status();
    return system_error("lstat of socket path '" + path + "'", errno);
  }
  if (!S_ISSOCK(info.st_mode))
    return invalid_error("socket path '" + path + "' exists and is not a socket; not removing it");
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return system_error("removing stale socket '" + path + "'", errno);
  return Status();
}

}  // namespace

Status send_message(int socket, MessageType type, std::uint32_t request_id, std::span<const std::byte> payload,
                    int fd) {
  if (payload.size() > kMaxPayloadBytes)
    return invalid_error("session message of type " + std::to_string(static_cast<unsigned>(type)) + " has " +
                         std::to_string(payload.size()) + " payload bytes; at most " +
                         std::to_string(kMaxPayloadBytes) + " fit");
  MessageHeader header;
  header.type = static_cast<std::uint16_t>(type);
  header.request_id = request_id;
  header.payload_bytes = static_cast<std::uint32_t>(payload.size());

  // Header and payload in one sendmsg: a SOCK_SEQPACKET record is atomic, so the peer
  // never sees a header without its payload.
  iovec iov[2] = {
      {&header, sizeof(header)},
      {const_cast<std::byte*>(payload.data()), payload.size()},  // sendmsg only reads it
  };
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = payload.empty() ? 1 : 2;

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

  const std::size_t total = sizeof(header) + payload.size();
  for (;;) {
    const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (sent >= 0) {
      // Only a SOCK_STREAM socket can take part of a message; the channel is meant for
      // SOCK_SEQPACKET, and a half-sent message would desynchronise the peer.
      if (static_cast<std::size_t>(sent) != total)
        return invalid_error("session channel took " + std::to_string(sent) + " of " + std::to_string(total) +
                             " bytes of a message; use SOCK_SEQPACKET");
      return Status();
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) return closed_error("sendmsg", err);
    if (err == EAGAIN || err == EWOULDBLOCK) return busy_error("session channel is full; try again");
    return system_error("sendmsg on session channel", err);
  }
}

Result<std::optional<ReceivedMessage>> receive_message(int socket) {
  // One byte more than the largest message, so that an oversize message shows up as a
  // longer read even on a socket type that does not report MSG_TRUNC.
  std::array<std::byte, kMaxMessageBytes + 1> buffer;
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
    if (err == ECONNRESET) return closed_error("recvmsg", err);
    return system_error("recvmsg on session channel", err);
  }

  // Own every passed descriptor before any check: each early return below then closes
  // them, which is how a malformed message can never leak an fd into the daemon.
  std::array<UniqueFd, kMaxReceivedFds> fds;
  std::size_t fd_count = 0;
  std::size_t fds_passed = 0;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));  // CMSG_DATA may be unaligned
      UniqueFd owned(fd);
      ++fds_passed;
      if (fd_count < fds.size()) fds[fd_count++] = std::move(owned);
    }
  }

  if ((msg.msg_flags & MSG_CTRUNC) != 0)
    return invalid_error("session message passed more file descriptors than fit (" + std::to_string(fds_passed) +
                         " received, the rest dropped); at most one is allowed");
  // A zero-length SOCK_SEQPACKET record reads like EOF; one carrying fds is not EOF.
  if (received == 0 && fds_passed == 0) return std::optional<ReceivedMessage>();
  const auto bytes = static_cast<std::size_t>(received);
  if ((msg.msg_flags & MSG_TRUNC) != 0 || bytes > kMaxMessageBytes)
    return invalid_error("session message is larger than " + std::to_string(kMaxMessageBytes) +
                         " bytes (truncated)");
  if (bytes < sizeof(MessageHeader))
    return invalid_error("session message of " + std::to_string(bytes) + " bytes is shorter than its " +
                         std::to_string(sizeof(MessageHeader)) + "-byte header");

  ReceivedMessage message;
  std::memcpy(&message.header, buffer.data(), sizeof(MessageHeader));
  const MessageHeader& header = message.header;
  if (header.magic != kMagic)
    return invalid_error("session message has bad magic " + std::to_string(header.magic) + ", expected " +
                         std::to_string(kMagic));
  if (header.version != kProtocolVersion)
    return invalid_error("session message has protocol version " + std::to_string(header.version) +
                         ", expected " + std::to_string(kProtocolVersion));
  const std::size_t payload_bytes = bytes - sizeof(MessageHeader);
  if (header.payload_bytes != payload_bytes)
    return invalid_error("session message header says " + std::to_string(header.payload_bytes) +
                         " payload bytes, but " + std::to_string(payload_bytes) + " arrived");
  if (fds_passed > 1)
    return invalid_error("session message passed " + std::to_string(fds_passed) +
                         " file descriptors; at most one is allowed");

  std::memcpy(message.payload.data(), buffer.data() + sizeof(MessageHeader), payload_bytes);
  message.payload_bytes = payload_bytes;
  message.fd = std::move(fds[0]);
  return std::optional<ReceivedMessage>(std::move(message));
}

Result<PeerCredentials> peer_credentials(int socket) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
    return system_error("SO_PEERCRED of socket " + std::to_string(socket), errno);
  // An unconnected socket answers with uid and gid -1. pid 0 alone is legitimate: a
  // peer in a pid namespace we cannot see.
  if (credentials.uid == static_cast<uid_t>(-1))
    return invalid_error("socket " + std::to_string(socket) + " has no peer credentials (not connected)");
  return PeerCredentials{credentials.uid, credentials.gid, credentials.pid};
}

Result<UniqueFd> listen_unix(const std::string& path, int type, unsigned mode, int backlog) {
  ACCORD_ASSIGN_OR_RETURN(const sockaddr_un address, unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, type | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket for '" + path + "'", errno);
  ACCORD_RETURN_IF_ERROR(remove_stale_socket(path));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0)
    return system_error("bind to '" + path + "'", errno);
  // chmod before listen: until listen() every connect is refused, so no client ever
  // gets in through the umask-derived mode that bind gave the file.
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    const int err = errno;
    static_cast<void>(::unlink(path.c_str()));
    return system_error("chmod of socket '" + path + "'", err);
  }
  if (::listen(fd.get(), backlog) != 0) {
    const int err = errno;
    static_cast<void>(::unlink(path.c_str()));
    return system_error("listen on '" + path + "'", err);
  }
  return fd;
}

Result<UniqueFd> connect_unix(const std::string& path, int type) {
  ACCORD_ASSIGN_OR_RETURN(const sockaddr_un address, unix_address(path));
  UniqueFd fd(::socket(AF_UNIX, type | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket for '" + path + "'", errno);
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EISCONN) break;  // an interrupted attempt that completed meanwhile
    if (err == ENOENT || err == ECONNREFUSED)
      return unsupported_error("nothing listens at '" + path + "' (is accordd running?): " + std::strerror(err));
    if (err == EAGAIN) return busy_error("listener at '" + path + "' has a full backlog; try again");
    return system_error("connect to '" + path + "'", err);
  }
  return fd;
}

Result<std::optional<UniqueFd>> accept_unix(int listener, bool nonblocking) {
  const int flags = SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0);
  UniqueFd fd(::accept4(listener, nullptr, nullptr, flags));
  if (fd) return std::optional<UniqueFd>(std::move(fd));
  const int err = errno;
  // Nothing to take now; the caller's poll loop tries again on the next wake-up.
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED)
    return std::optional<UniqueFd>();
  return system_error("accept4 on socket " + std::to_string(listener), err);
}

}  // namespace accord::wire
