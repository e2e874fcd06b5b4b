// The control half of accordd's channel to one GPU executor: request/response records
// on a SOCK_SEQPACKET socketpair (proto/wire/fd_socket.h), each with at most one
// descriptor (a HostVisible memfd, an exported VMM fd, the channel memfd). A payload too
// large for one record (a code image, a big region) travels in a sealed memfd instead.
// Not on the hot path (README.md, "Control requests"). Thread-safety: send from any
// thread (one sendmsg per record); receive from one thread per socket.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/status.h"
#include "client/api/unique_fd.h"

namespace accord::executor {

enum class ControlOp : std::uint16_t {
  Init = 1,   // accordd -> executor: the channel memfd (ExecutorChannel), no payload
  Hello = 2,  // executor -> accordd, once, after Init: HelloInfo
  Lost = 3,   // executor -> accordd: the real device reported loss: LostInfo; it exits next
  Allocate = 10,
  Admit = 11,
  Load = 12,
  Lower = 13,
  Release = 14,
  FreeMemory = 15,
  Exit = 16,    // accordd -> executor: shut the device down and exit 0 (answered first)
  Reply = 100,  // executor -> accordd: the answer to `request_id`
};

struct ControlMessage {
  ControlOp op = ControlOp::Reply;
  std::uint32_t request_id = 0;
  // Reply only: 0 OK (payload is the answer), else 1 + ErrorKind (payload is the message).
  std::uint32_t status = 0;
  std::vector<std::byte> payload;
  UniqueFd fd;
};

// Payloads above this go in a sealed memfd (the record then carries no other fd).
inline constexpr std::size_t kInlinePayloadBytes = 32 * 1024;
// The largest payload accepted at all (code images are at most 1 GiB, as on the session
// channel).
inline constexpr std::size_t kMaxPayloadBytes = (std::size_t{1} << 30) + (std::size_t{1} << 20);

// Sends one record. Invalid("executor channel closed ...") when the peer hung up;
// Internal when a payload needs a memfd and `fd` is also given.
Status send_control(int socket, ControlOp op, std::uint32_t request_id, std::uint32_t status,
                    std::span<const std::byte> payload, int fd = -1);

// Receives one record; an empty optional when the peer hung up. Invalid for anything
// malformed (bad magic, a size that disagrees, an unsealed or oversize payload memfd);
// its descriptors are closed.
Result<std::optional<ControlMessage>> receive_control(int socket);

// The status of a Reply (`error` OK for success) and back.
std::uint32_t encode_status(const Status& error) noexcept;
// The Reply's error, or OK. Invalid for an unknown code.
Status decode_status(std::uint32_t code, std::span<const std::byte> message, const std::string& who);

const char* to_string(ControlOp op) noexcept;

}  // namespace accord::executor
