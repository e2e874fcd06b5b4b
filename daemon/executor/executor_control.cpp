// Framing of control records: a 16-byte header, then the payload inline or, when it is
// large, in a memfd sealed against writes so the receiver reads what was sent.
#include "daemon/executor/executor_control.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "proto/wire/fd_socket.h"

namespace accord::executor {
namespace {

constexpr std::uint32_t kControlMagic = 0x43584341;  // "ACXC" little-endian
constexpr std::uint16_t kPayloadInMemfd = 1;
constexpr std::size_t kMaxRecordBytes = 16 + kInlinePayloadBytes;

struct ControlHeader {
  std::uint32_t magic = kControlMagic;
  std::uint16_t op = 0;
  std::uint16_t flags = 0;
  std::uint32_t request_id = 0;
  std::uint32_t status = 0;
};
static_assert(sizeof(ControlHeader) == 16);

Result<UniqueFd> sealed_memfd(std::span<const std::byte> bytes) {
  UniqueFd fd(::memfd_create("accord-executor-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return busy_error(std::string("executor channel: memfd_create: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return busy_error(std::string("executor channel: writing a payload memfd: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return internal_error(std::string("executor channel: sealing a payload memfd: ") + std::strerror(errno));
  return fd;
}

Result<std::vector<std::byte>> read_sealed(int fd) {
  const int seals = ::fcntl(fd, F_GET_SEALS);
  constexpr int kNeeded = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
  if (seals < 0 || (seals & kNeeded) != kNeeded)
    return invalid_error("executor message: its payload memfd is not sealed against writes");
  struct stat info {};
  if (::fstat(fd, &info) != 0 || info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) > kMaxPayloadBytes)
    return invalid_error("executor message: its payload memfd is larger than allowed");
  std::vector<std::byte> bytes(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return invalid_error("executor message: reading its payload memfd failed");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

}  // namespace

Status send_control(int socket, ControlOp op, std::uint32_t request_id, std::uint32_t status,
                    std::span<const std::byte> payload, int fd) {
  ControlHeader header;
  header.op = static_cast<std::uint16_t>(op);
  header.request_id = request_id;
  header.status = status;
  UniqueFd memfd;
  if (payload.size() > kInlinePayloadBytes) {
    if (fd >= 0) return internal_error("executor channel: a large payload cannot travel with a descriptor");
    ACCORD_ASSIGN_OR_RETURN(memfd, sealed_memfd(payload));
    header.flags = kPayloadInMemfd;
    payload = {};
    fd = memfd.get();
  }
  const std::span<const std::byte> parts[2] = {std::as_bytes(std::span<const ControlHeader>(&header, 1)), payload};
  return wire::send_record(socket, parts, fd, "executor");
}

Result<std::optional<ControlMessage>> receive_control(int socket) {
  std::vector<std::byte> buffer(kMaxRecordBytes + 1);
  auto received = wire::receive_record(socket, buffer, kMaxRecordBytes, "executor");
  // A peer that exits with our message unread resets the connection (ECONNRESET): for
  // the supervisor that is a hang-up like any other, not a malformed message.
  if (!received.ok() && received.status().message().starts_with("executor channel closed"))
    return std::optional<ControlMessage>();
  ACCORD_ASSIGN_OR_RETURN(std::optional<wire::ReceivedRecord> record, std::move(received));
  if (!record) return std::optional<ControlMessage>();
  if (record->bytes < sizeof(ControlHeader))
    return invalid_error("executor message of " + std::to_string(record->bytes) + " bytes is shorter than its header");
  if (record->fds_passed > 1) return invalid_error("executor message passed more than one descriptor");
  ControlHeader header;
  std::memcpy(&header, buffer.data(), sizeof(header));
  if (header.magic != kControlMagic) return invalid_error("executor message has bad magic " + std::to_string(header.magic));
  ControlMessage message;
  message.op = static_cast<ControlOp>(header.op);
  message.request_id = header.request_id;
  message.status = header.status;
  if ((header.flags & kPayloadInMemfd) != 0) {
    if (record->bytes != sizeof(ControlHeader) || !record->fd)
      return invalid_error("executor message says its payload is in a memfd but passed none");
    ACCORD_ASSIGN_OR_RETURN(message.payload, read_sealed(record->fd.get()));
  } else {
    message.payload.assign(buffer.begin() + sizeof(ControlHeader),
                           buffer.begin() + static_cast<std::ptrdiff_t>(record->bytes));
    message.fd = std::move(record->fd);
  }
  return std::optional<ControlMessage>(std::move(message));
}

std::uint32_t encode_status(const Status& error) noexcept {
  return error.ok() ? 0 : 1 + static_cast<std::uint32_t>(error.kind());
}

Status decode_status(std::uint32_t code, std::span<const std::byte> message, const std::string& who) {
  if (code == 0) return Status();
  if (code - 1 > static_cast<std::uint32_t>(ErrorKind::Internal))
    return invalid_error(who + " answered with unknown status " + std::to_string(code));
  const std::size_t bytes = std::min<std::size_t>(message.size(), 4096);
  return Status::error(static_cast<ErrorKind>(code - 1),
                       std::string(reinterpret_cast<const char*>(message.data()), bytes));
}

const char* to_string(ControlOp op) noexcept {
  switch (op) {
    case ControlOp::Init: return "init";
    case ControlOp::Hello: return "hello";
    case ControlOp::Lost: return "lost";
    case ControlOp::Allocate: return "allocate";
    case ControlOp::Admit: return "admit";
    case ControlOp::Load: return "load";
    case ControlOp::Lower: return "lower";
    case ControlOp::Release: return "release";
    case ControlOp::FreeMemory: return "free_memory";
    case ControlOp::Exit: return "exit";
    case ControlOp::Reply: return "reply";
  }
  return "unknown";
}

}  // namespace accord::executor
