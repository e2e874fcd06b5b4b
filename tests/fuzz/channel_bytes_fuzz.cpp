// libFuzzer target: a hostile client's session channel. Each input is a little program
// of datagrams sent on one raw connection to accordd's session socket (never with a
// descriptor attached): raw bytes, messages with a valid header around a fuzzed type,
// request id and payload (and sometimes a payload size that lies), a real Hello or
// OpenRing so later messages reach a session's handlers, reads of whatever accordd
// answered, and half-closes. Afterwards accordd must have ended that connection's
// session, a fresh session must open and have its ring served, and the witness session
// must still submit and complete its graph.
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/fuzz/fuzz_daemon.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace accord;
using namespace accord::fuzz;
using Clock = std::chrono::steady_clock;

enum Action : std::uint8_t {
  kRawDatagram,   // up to 4200 input bytes as one datagram
  kFramed,        // a valid header, a fuzzed type and request id, the payload from the input
  kHello,         // a well-formed Hello
  kOpenRing,      // a well-formed OpenRing
  kReadReplies,   // drain what accordd answered (without waiting)
  kHalfClose,     // shutdown(SHUT_WR): no more from this client
  kActions,
};

void send_datagram(int socket, const void* bytes, std::size_t n) {
  // Refused sends (accordd dropped us, our buffer is full) are part of the game.
  static_cast<void>(::send(socket, bytes, n, MSG_NOSIGNAL | MSG_DONTWAIT));
}

void read_replies(int socket) {
  std::array<std::byte, wire::kMaxMessageBytes + 64> buffer;
  while (::recv(socket, buffer.data(), buffer.size(), MSG_DONTWAIT) > 0) {
  }
}

void run(int socket, FuzzInput& in) {
  std::array<std::byte, 4200> buffer{};
  for (int steps = 0; !in.empty() && steps < 64; ++steps) {
    switch (static_cast<Action>(in.byte() % kActions)) {
      case kRawDatagram: {
        const std::size_t n = in.value<std::uint16_t>() % buffer.size();
        in.bytes(buffer.data(), n);
        send_datagram(socket, buffer.data(), n);
        break;
      }
      case kFramed: {
        wire::MessageHeader header;
        const std::uint8_t shape = in.byte();
        header.type = (shape & 0x80) != 0 ? in.value<std::uint16_t>() : static_cast<std::uint16_t>(shape % 12);
        header.request_id = in.byte();
        const std::size_t n = in.value<std::uint16_t>() % (buffer.size() - sizeof(header));
        header.payload_bytes = (shape & 0x40) != 0 ? in.value<std::uint32_t>() : static_cast<std::uint32_t>(n);
        if ((shape & 0x20) != 0) header.version = in.value<std::uint16_t>();
        std::memcpy(buffer.data(), &header, sizeof(header));
        in.bytes(buffer.data() + sizeof(header), n);
        send_datagram(socket, buffer.data(), sizeof(header) + n);
        break;
      }
      case kHello: {
        wire::HelloPayload hello;
        wire::set_text(hello.label, "fuzz-channel");
        hello.max_submissions = in.byte();
        hello.priority = static_cast<std::int8_t>(in.byte());
        static_cast<void>(wire::send_payload(socket, wire::MessageType::Hello, in.byte(), hello));
        break;
      }
      case kOpenRing:
        static_cast<void>(wire::send_payload(socket, wire::MessageType::OpenRing, in.byte(), wire::OpenRingPayload{}));
        break;
      case kReadReplies: read_replies(socket); break;
      case kHalfClose: ::shutdown(socket, SHUT_WR); break;
      case kActions: break;
    }
  }
}

// A session opened after the input: Hello, OpenRing, and an entry the ring must answer
// (Invalid: the fresh session has no graphs).
void fresh_session_works(FuzzDaemon& daemon) {
  RawSession session = daemon.open_session();
  std::unique_ptr<ClientRing> ring = daemon.open_ring(session);
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::Submit);
  entry.tag = 77;
  entry.handle = 12345;
  ACCORD_FUZZ_CHECK(ring->requests.try_push(entry), "a fresh ring is full");
  const auto answer = next_answer(*ring);
  ACCORD_FUZZ_CHECK(answer.has_value(), "a fresh session's ring was never served");
  ACCORD_FUZZ_CHECK(answer->tag == 77 && answer->status == 1 + static_cast<std::uint32_t>(ErrorKind::Invalid),
                    "a fresh session's ring answered status " + std::to_string(answer->status));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzDaemon& daemon = FuzzDaemon::instance();
  static Witness witness(daemon);
  static const std::size_t baseline_fds = [] {
    witness.prove_alive();
    return open_fd_count();
  }();

  {
    UniqueFd socket = daemon.connect_channel();
    FuzzInput in(data, size);
    run(socket.get(), in);
  }  // closed: accordd ends whatever session the input opened

  daemon.await_sessions(1);
  fresh_session_works(daemon);
  daemon.await_sessions(1);
  witness.prove_alive();
  const auto until = Clock::now() + kAnswerTimeout;
  while (open_fd_count() > baseline_fds) {
    ACCORD_FUZZ_CHECK(Clock::now() < until, std::to_string(open_fd_count() - baseline_fds) +
                                                " descriptors more than before the input are still open");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return 0;
}
