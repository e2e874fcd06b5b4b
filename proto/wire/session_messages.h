// The session channel's messages: fixed-layout records on a SOCK_SEQPACKET Unix socket
// between a client and accordd. The channel opens a session (Hello -> Welcome), carries
// file descriptors (sealed memfds of HostVisible buffers), and its life is the session's:
// when it closes, the daemon lets in-flight work finish and releases the session.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accord/status.h"

namespace accord::wire {

inline constexpr std::uint32_t kMagic = 0x44524341;  // "ACRD" little-endian
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kMaxMessageBytes = 4096;
inline constexpr std::size_t kTokenChars = 32;  // hex of 128 random bits
// The gRPC metadata key that carries the session token on every control-plane call.
inline constexpr std::string_view kSessionMetadataKey = "accord-session";

enum class MessageType : std::uint16_t {
  Hello = 1,      // client -> daemon: HelloPayload
  Welcome = 2,    // daemon -> client: WelcomePayload
  MapBuffer = 3,  // client -> daemon: MapBufferPayload
  BufferFd = 4,   // daemon -> client: BufferFdPayload + one fd (SCM_RIGHTS)
  Error = 5,      // daemon -> client: ErrorPayload, answering `request_id`
  Goodbye = 6,    // either side: orderly close (no payload)
  CodeImageUploaded = 7,  // daemon -> client: CodeImageUploadedPayload
  // client -> daemon: CodeImagePayload + one sealed memfd holding a GPU image or NPU
  // program too large for a gRPC message. The daemon checks the seals (shrink, grow and
  // write), copies the bytes and closes the fd, answering CodeImageUploaded (or Error).
  CodeImage = 8,
  // daemon -> client: RingFdPayload + the session's submission ring (a sealed memfd,
  // ring_layout.h), answering OpenRing.
  RingFd = 9,
  // client -> daemon: OpenRingPayload. Asks for the session's submission ring; once per
  // session. Clients that never ask use gRPC for every operation.
  OpenRing = 10,
};

// Largest code image accepted on the session channel.
inline constexpr std::uint64_t kMaxCodeImageBytes = std::uint64_t{1} << 30;

struct MessageHeader {
  std::uint32_t magic = kMagic;
  std::uint16_t version = kProtocolVersion;
  std::uint16_t type = 0;           // MessageType
  std::uint32_t request_id = 0;     // echoed by the answer
  std::uint32_t payload_bytes = 0;  // bytes after the header
};

struct HelloPayload {
  std::array<char, 64> label{};  // the client's name for itself (program name); NUL padded
  // Limits the client asks for; 0 takes the daemon's. The daemon grants at most its own
  // configured limits, so a client can only ask for less.
  std::uint64_t max_submissions = 0;
  std::uint64_t graph_slots = 0;
  std::uint64_t memory_budget = 0;
  // Scheduling priority asked for (0 default); accordd grants it within its
  // [priorities] configuration or refuses the session naming the allowed maximum.
  std::int64_t priority = 0;
};

struct WelcomePayload {
  std::uint64_t session_id = 0;
  // NUL terminated; sized to a multiple of 8 so the struct has no padding bytes (every
  // byte sent is initialised).
  std::array<char, kTokenChars + 8> token{};
  std::uint64_t max_submissions = 0;
  std::uint64_t graph_slots = 0;
  std::uint64_t memory_budget = 0;  // 0: none
  std::int64_t priority = 0;        // granted
  // The largest gRPC request accordd accepts: larger code images travel as CodeImage.
  std::uint64_t max_message_bytes = 0;
};

struct CodeImagePayload {
  std::uint64_t bytes = 0;  // image bytes at the start of the memfd (<= its size)
};

struct CodeImageUploadedPayload {
  std::uint64_t upload = 0;  // LoadKernelRequest.image_upload; valid for one LoadKernel
  std::uint64_t bytes = 0;
};

struct OpenRingPayload {
  // kRingFeature* bits (ring_layout.h) the client understands; 0 for the ring as
  // version 1.1 served it. Was a reserved 0, so an older accordd ignores it.
  std::uint64_t features = 0;
};

struct RingFdPayload {
  std::uint32_t sq_capacity = 0;  // as in the ring's header, which the client checks anyway
  std::uint32_t cq_capacity = 0;
};

struct MapBufferPayload {
  std::uint64_t buffer = 0;  // handle from Allocate
};

struct BufferFdPayload {
  std::uint64_t buffer = 0;
  std::uint64_t bytes = 0;      // the buffer's size
  std::uint64_t map_bytes = 0;  // how much of the fd to mmap (page-rounded)
};

struct ErrorPayload {
  std::uint32_t kind = 0;                // accord::ErrorKind
  std::array<char, 256> message{};       // NUL terminated
};

// Copies `text` into a fixed, NUL-terminated field, truncating.
template <std::size_t N>
void set_text(std::array<char, N>& field, std::string_view text) noexcept {
  const std::size_t n = text.size() < N - 1 ? text.size() : N - 1;
  for (std::size_t i = 0; i < n; ++i) field[i] = text[i];
  for (std::size_t i = n; i < N; ++i) field[i] = '\0';
}
// Reads a fixed text field, stopping at the first NUL or the end (never overruns).
template <std::size_t N>
std::string get_text(const std::array<char, N>& field) {
  std::size_t n = 0;
  while (n < N && field[n] != '\0') ++n;
  return std::string(field.data(), n);
}

}  // namespace accord::wire
