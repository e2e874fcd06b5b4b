// Garbage on the control-plane socket: raw AF_UNIX stream connections that send random
// bytes, a truncated HTTP/2 preface, or a valid preface followed by garbage frames, then
// close. gRPC must drop each one without disturbing other connections, and without
// keeping a descriptor per dead connection.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <grpc/support/log.h>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr std::size_t kPrefaceBytes = sizeof(kPreface) - 1;  // 24

UniqueFd connect_stream(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof(address.sun_path));
  std::memcpy(address.sun_path, path.data(), path.size());
  REQUIRE(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

// Sends what fits without blocking; the server may close or reset at any point.
void send_some(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string out(n, '\0');
  for (char& ch : out) ch = static_cast<char>(rng() & 0xff);
  return out;
}

// One HTTP/2 frame: 24-bit length, type, flags, 31-bit stream id, payload. The length
// field is `declared`, which need not match the payload.
std::string frame(std::uint32_t declared, std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                  const std::string& payload) {
  std::string out;
  out.push_back(static_cast<char>((declared >> 16) & 0xff));
  out.push_back(static_cast<char>((declared >> 8) & 0xff));
  out.push_back(static_cast<char>(declared & 0xff));
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>((stream >> 24) & 0x7f));
  out.push_back(static_cast<char>((stream >> 16) & 0xff));
  out.push_back(static_cast<char>((stream >> 8) & 0xff));
  out.push_back(static_cast<char>(stream & 0xff));
  return out + payload;
}

std::string honest_frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream, const std::string& payload) {
  return frame(static_cast<std::uint32_t>(payload.size()), type, flags, stream, payload);
}

std::string setting(std::uint16_t id, std::uint32_t value) {
  std::string out;
  out.push_back(static_cast<char>(id >> 8));
  out.push_back(static_cast<char>(id & 0xff));
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
  return out;
}

// The bytes of one hostile connection, by variant.
std::string hostile_bytes(std::mt19937_64& rng, int variant) {
  const std::string preface(kPreface, kPrefaceBytes);
  switch (variant) {
    case 0:  // random bytes
      return random_bytes(rng, rng() % 4096 + 1);
    case 1:  // a truncated preface
      return preface.substr(0, rng() % kPrefaceBytes);
    case 2:  // a corrupted preface
    {
      std::string bytes = preface;
      bytes[rng() % kPrefaceBytes] ^= static_cast<char>(rng() % 255 + 1);
      return bytes + random_bytes(rng, rng() % 64);
    }
    case 3:  // a valid preface, then random bytes
      return preface + random_bytes(rng, rng() % 2048 + 1);
    case 4:  // a valid preface, then random frames (lengths may lie, up to 16 MiB)
    {
      std::string bytes = preface;
      const int frames = static_cast<int>(rng() % 8) + 1;
      for (int i = 0; i < frames; ++i) {
        const std::string payload = random_bytes(rng, rng() % 512);
        const std::uint32_t declared =
            rng() % 2 ? static_cast<std::uint32_t>(payload.size()) : static_cast<std::uint32_t>(rng() & 0xffffff);
        bytes += frame(declared, static_cast<std::uint8_t>(rng() % 12), static_cast<std::uint8_t>(rng()),
                       static_cast<std::uint32_t>(rng() % 8), payload);
      }
      return bytes;
    }
    case 5:  // a valid preface and SETTINGS, then a HEADERS block of garbage HPACK
    {
      std::string bytes = preface + honest_frame(4, 0, 0, "");
      bytes += honest_frame(1, 0x4 | (rng() % 2), 1, random_bytes(rng, rng() % 256 + 1));
      return bytes;
    }
    default:  // absurd SETTINGS and flow-control frames
    {
      std::string settings = setting(0x4, 0x80000000u) + setting(0x5, 1) + setting(0x3, 0) + setting(0x6, 0) +
                             setting(static_cast<std::uint16_t>(rng()), static_cast<std::uint32_t>(rng()));
      std::string bytes = preface + honest_frame(4, 0, 0, settings);
      bytes += honest_frame(8, 0, 0, std::string(4, '\0'));                      // WINDOW_UPDATE of 0
      bytes += honest_frame(6, 0, 0, random_bytes(rng, 8));                      // PING
      bytes += honest_frame(6, 0, 1, random_bytes(rng, 8));                      // PING on a stream
      bytes += honest_frame(3, 0, 0, std::string(4, '\x01'));                    // RST_STREAM on stream 0
      bytes += honest_frame(0, 1, 3, random_bytes(rng, 32));                     // DATA on an idle stream
      bytes += honest_frame(7, 0, 0, std::string(8, '\0') + "robustness");       // GOAWAY
      bytes += honest_frame(4, 1, 0, random_bytes(rng, rng() % 4 + 1));          // bad SETTINGS ack
      return bytes;
    }
  }
}

constexpr int kVariants = 7;

// gRPC logs an error per malformed connection (HPACK, framing). During the barrage they
// are expected: counted and dropped; any other time they print as usual.
std::atomic<bool> quiet_grpc{false};
std::atomic<int> dropped_grpc_logs{0};

void filtered_grpc_log(gpr_log_func_args* args) {
  if (quiet_grpc.load()) {
    dropped_grpc_logs.fetch_add(1);
    return;
  }
  std::fprintf(stderr, "grpc %s %s:%d] %s\n", gpr_log_severity_string(args->severity), args->file, args->line,
               args->message);
}

// Silences gRPC's own logging for a scope.
class QuietGrpcLog {
 public:
  QuietGrpcLog() {
    gpr_set_log_function(&filtered_grpc_log);
    quiet_grpc.store(true);
  }
  ~QuietGrpcLog() { quiet_grpc.store(false); }
  QuietGrpcLog(const QuietGrpcLog&) = delete;
  QuietGrpcLog& operator=(const QuietGrpcLog&) = delete;
};

}  // namespace

TEST_CASE("garbage on the gRPC socket is dropped and the daemon keeps serving", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  require_serving(d, stub, s);  // the fixture's connection is up before the baseline
  const std::size_t baseline_fds = open_fd_count();

  // Connections that never say anything, or stop after the preface, stay open across
  // the whole barrage: they must not hold up anyone else.
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(connect_stream(d.grpc_path()));
    if (i % 2 == 1) send_some(idle.back().get(), std::string(kPreface, kPrefaceBytes));
  }

  std::optional<QuietGrpcLog> quiet(std::in_place);
  std::mt19937_64 rng(0x5eed'a11c'0ffeeULL);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  int connections = 0;
  for (; connections < 400 && std::chrono::steady_clock::now() < until; ++connections) {
    const int variant = connections % kVariants;
    UniqueFd fd = connect_stream(d.grpc_path());
    send_some(fd.get(), hostile_bytes(rng, variant));
    if (connections % 3 == 0) {
      // An abortive close (RST) rather than an orderly FIN.
      linger abort_close{1, 0};
      setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close));
    } else if (connections % 3 == 1) {
      ::shutdown(fd.get(), SHUT_WR);
    }
    // Every 50 connections, a normal call interleaves with the garbage.
    if (connections % 50 == 49) {
      v1::ListDevicesRequest request;
      v1::ListDevicesResponse response;
      REQUIRE_OK(stub.ListDevices(make_context(s).get(), request, &response));
    }
  }
  INFO(connections << " hostile connections; " << dropped_grpc_logs.load() << " gRPC log lines dropped");
  CHECK(connections >= 100);

  // The connection made before the barrage, a new connection, and the session channel
  // all still work.
  require_serving(d, stub, s);
  {
    auto fresh = d.new_stub();
    v1::ListDevicesRequest request;
    v1::ListDevicesResponse response;
    // The listener may still be working through the barrage's backlog: with a full
    // backlog a non-blocking connect fails at once, and gRPC reports that as a failed
    // connection (UNAVAILABLE). A client that waits for the channel gets in.
    auto context = make_context(std::nullopt);
    context->set_wait_for_ready(true);
    REQUIRE_OK(fresh->ListDevices(context.get(), request, &response));
    CHECK(response.devices_size() >= 1);
    require_serving(d, *fresh, s);
  }
  idle.clear();

  // Every hostile (and idle) connection's descriptor is closed again, on both ends.
  const bool settled = eventually([&] { return open_fd_count() <= baseline_fds + 4; }, 5000);
  INFO("open descriptors: " << open_fd_count() << ", baseline " << baseline_fds);
  CHECK(settled);
  quiet.reset();
  require_serving(d);
}

}  // namespace robustness
