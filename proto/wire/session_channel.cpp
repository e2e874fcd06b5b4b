#include "proto/wire/session_channel.h"

#include "proto/wire/fd_socket.h"

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


constexpr std::size_t kMaxPayloadBytes = kMaxMessageBytes - sizeof(MessageHeader);

static_assert(sizeof(MessageHeader) == 16, "the header is a wire format: no padding");

// Exhausting descriptors or kernel memory is a limit, not a bug (ARCHITECTURE.md,
// security model: exhausting a resource is Busy); anything else is a bad argument.
Status system_error(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS) return busy_error(std::move(message));
  return invalid_error(std::move(message));
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
  // Header and payload in one record: a SOCK_SEQPACKET record is atomic, so the peer
  // never sees a header without its payload.
  const std::span<const std::byte> parts[2] = {
      std::as_bytes(std::span<const MessageHeader>(&header, 1)), payload};
  return send_record(socket, parts, fd, "session");
}

Result<std::optional<ReceivedMessage>> receive_message(int socket) {
  std::array<std::byte, kMaxMessageBytes + 1> buffer;
  ACCORD_ASSIGN_OR_RETURN(std::optional<ReceivedRecord> record,
                          receive_record(socket, buffer, kMaxMessageBytes, "session"));
  if (!record) return std::optional<ReceivedMessage>();
  const std::size_t bytes = record->bytes;
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
  if (record->fds_passed > 1)
    return invalid_error("session message passed " + std::to_string(record->fds_passed) +
                         " file descriptors; at most one is allowed");

  std::memcpy(message.payload.data(), buffer.data() + sizeof(MessageHeader), payload_bytes);
  message.payload_bytes = payload_bytes;
  message.fd = std::move(record->fd);
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
