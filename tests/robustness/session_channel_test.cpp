// Garbage on the session channel (raw SOCK_SEQPACKET records: random bytes, short, bad
// magic or version, lying sizes, out-of-order and unknown messages, passed descriptors),
// and the session's life ending with its channel.
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

// Sends one raw record, optionally with `fds` (SCM_RIGHTS). REQUIREs that it was sent.
void send_raw(int socket, const std::string& bytes, const std::vector<int>& fds = {}) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  INFO("sendmsg: " << (sent < 0 ? std::strerror(errno) : "ok"));
  REQUIRE(sent == static_cast<ssize_t>(bytes.size()));
}

std::string header_bytes(std::uint32_t magic, std::uint16_t version, std::uint16_t type, std::uint32_t request_id,
                         std::uint32_t payload_bytes) {
  wire::MessageHeader header;
  header.magic = magic;
  header.version = version;
  header.type = type;
  header.request_id = request_id;
  header.payload_bytes = payload_bytes;
  return std::string(reinterpret_cast<const char*>(&header), sizeof(header));
}

std::string message_bytes(wire::MessageType type, std::uint32_t request_id, const std::string& payload) {
  return header_bytes(wire::kMagic, wire::kProtocolVersion, static_cast<std::uint16_t>(type), request_id,
                      static_cast<std::uint32_t>(payload.size())) +
         payload;
}

template <class T>
std::string payload_bytes(const T& payload) {
  return std::string(reinterpret_cast<const char*>(&payload), sizeof(T));
}

std::string map_payload(std::uint64_t buffer) {
  wire::MapBufferPayload map;
  map.buffer = buffer;
  return payload_bytes(map);
}

std::string hello_payload() {
  wire::HelloPayload hello;
  wire::set_text(hello.label, "robustness");
  return payload_bytes(hello);
}

// The daemon answers `socket` with an Error containing `fragment` (and request id `id`),
// then closes the connection.
void expect_error_then_close(int socket, const std::string& fragment, std::uint32_t id = 0) {
  ChannelRead read = read_channel(socket);
  INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
  REQUIRE(read.kind == ChannelRead::Kind::Message);
  REQUIRE(read.message->type() == wire::MessageType::Error);
  CHECK(read.message->header.request_id == id);
  CHECK_FALSE(read.message->fd.valid());
  auto error = read.message->as<wire::ErrorPayload>();
  REQUIRE(error.ok());
  CHECK(error->kind == static_cast<std::uint32_t>(accord::ErrorKind::Invalid));
  CHECK_THAT(wire::get_text(error->message), Catch::Matchers::Contains(fragment));
  CHECK(wait_closed(socket));
}

// The daemon answers a MapBuffer of an unknown handle with an Error echoing `id`, and the
// connection stays open.
void expect_unknown_buffer(int socket, std::uint64_t handle, std::uint32_t id) {
  ChannelRead read = read_channel(socket);
  INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
  REQUIRE(read.kind == ChannelRead::Kind::Message);
  REQUIRE(read.message->type() == wire::MessageType::Error);
  CHECK(read.message->header.request_id == id);
  CHECK_FALSE(read.message->fd.valid());
  auto error = read.message->as<wire::ErrorPayload>();
  REQUIRE(error.ok());
  CHECK_THAT(wire::get_text(error->message), Catch::Matchers::Contains("buffer handle " + std::to_string(handle)));
}

std::size_t session_count(TestDaemon& d) { return d.daemon().session_count(); }

}  // namespace

TEST_CASE("malformed session-channel records get an Error and a closed connection", "[daemon][robustness]") {
  TestDaemon d;
  // A session that lives through all of it and must keep working.
  const Session bystander = d.open_session();
  const std::size_t baseline = session_count(d);
  // Connections that never send anything do not hold up the others.
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(connect_session_channel(d));

  SECTION("a record shorter than the header") {
    for (const std::size_t n : {std::size_t{1}, std::size_t{5}, sizeof(wire::MessageHeader) - 1}) {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), std::string(n, '\x41'));
      expect_error_then_close(c.get(), "shorter than its 16-byte header");
    }
  }
  SECTION("bad magic") {
    UniqueFd c = connect_session_channel(d);
    send_raw(c.get(), header_bytes(0xdeadbeef, wire::kProtocolVersion, 1, 7, 0));
    expect_error_then_close(c.get(), "bad magic " + std::to_string(0xdeadbeefu));
  }
  SECTION("bad version") {
    for (const std::uint16_t version : {std::uint16_t{0}, std::uint16_t{2}, std::uint16_t{0xffff}}) {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), header_bytes(wire::kMagic, version, 1, 7, sizeof(wire::HelloPayload)) + hello_payload());
      expect_error_then_close(c.get(), "protocol version " + std::to_string(version));
    }
  }
  SECTION("payload size disagreeing with the header") {
    struct Case {
      std::uint32_t declared;
      std::size_t actual;
    };
    for (const Case& k : {Case{100, 8}, Case{0, 50}, Case{8, 0}, Case{0xffffffffu, 8}}) {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), header_bytes(wire::kMagic, wire::kProtocolVersion, 3, 7, k.declared) +
                            std::string(k.actual, '\0'));
      expect_error_then_close(c.get(), "says " + std::to_string(k.declared) + " payload bytes, but " +
                                           std::to_string(k.actual) + " arrived");
    }
  }
  SECTION("a record larger than the protocol's maximum") {
    UniqueFd c = connect_session_channel(d);
    send_raw(c.get(), message_bytes(wire::MessageType::Hello, 7, std::string(8000, 'h')));
    expect_error_then_close(c.get(), "larger than 4096");
  }
  SECTION("Hello with a payload of the wrong size") {
    for (const std::size_t n : {std::size_t{0}, std::size_t{10}, sizeof(wire::HelloPayload) + 8}) {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), message_bytes(wire::MessageType::Hello, 9, std::string(n, 'x')));
      expect_error_then_close(c.get(), std::to_string(n) + " payload bytes, expected", 9);
    }
  }
  SECTION("MapBuffer before Hello") {
    UniqueFd c = connect_session_channel(d);
    send_raw(c.get(), message_bytes(wire::MessageType::MapBuffer, 11, map_payload(1)));
    expect_error_then_close(c.get(), "MapBuffer before Hello", 11);
  }
  SECTION("messages only the daemon sends, and unknown types") {
    for (const std::uint16_t type : {std::uint16_t{0}, std::uint16_t{2}, std::uint16_t{4}, std::uint16_t{5},
                                     std::uint16_t{7}, std::uint16_t{0xffff}}) {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), header_bytes(wire::kMagic, wire::kProtocolVersion, type, 13, 0));
      expect_error_then_close(c.get(), "unexpected session message type " + std::to_string(type), 13);
    }
  }
  SECTION("a second Hello ends the session") {
    UniqueFd c = connect_session_channel(d);
    send_hello(c.get(), 1);
    ChannelRead welcome = read_channel(c.get());
    REQUIRE(welcome.kind == ChannelRead::Kind::Message);
    REQUIRE(welcome.message->type() == wire::MessageType::Welcome);
    const std::string token = wire::get_text(welcome.message->as<wire::WelcomePayload>()->token);
    CHECK(session_count(d) == baseline + 1);
    send_hello(c.get(), 2);
    expect_error_then_close(c.get(), "Hello sent twice", 2);
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    CHECK_STATUS(d.stub().GetSessionInfo(make_context(std::optional<std::string>(token)).get(), request, &info),
                 grpc::StatusCode::UNAUTHENTICATED, "session token");
  }
  SECTION("a zero-length record reads as the end of the conversation") {
    UniqueFd c = connect_session_channel(d);
    send_raw(c.get(), "");
    CHECK(wait_closed(c.get()));
  }
  SECTION("Goodbye closes the connection and the session") {
    UniqueFd c = connect_session_channel(d);
    send_hello(c.get(), 1);
    ChannelRead welcome = read_channel(c.get());
    REQUIRE(welcome.kind == ChannelRead::Kind::Message);
    REQUIRE(welcome.message->type() == wire::MessageType::Welcome);
    send_raw(c.get(), message_bytes(wire::MessageType::Goodbye, 3, ""));
    CHECK(wait_closed(c.get()));
  }
  SECTION("random records") {
    std::mt19937_64 rng(0xacc0'4d5e'55ULL);
    for (int i = 0; i < 100; ++i) {
      UniqueFd c = connect_session_channel(d);
      std::string bytes(rng() % 4096 + 1, '\0');
      for (char& ch : bytes) ch = static_cast<char>(rng() & 0xff);
      if (i % 4 == 0 && bytes.size() >= sizeof(wire::MessageHeader)) {
        // A valid header start with random type, id and size, so the later checks run too.
        const std::string header = header_bytes(wire::kMagic, wire::kProtocolVersion,
                                                static_cast<std::uint16_t>(rng()), static_cast<std::uint32_t>(rng()),
                                                static_cast<std::uint32_t>(rng()));
        bytes.replace(0, header.size(), header);
      }
      send_raw(c.get(), bytes);
      // An Error (then the close), or the close alone; never a Welcome or a hang.
      ChannelRead read = read_channel(c.get());
      INFO("record " << i << " of " << bytes.size() << " bytes; read " << static_cast<int>(read.kind) << " "
                     << read.error);
      REQUIRE((read.kind == ChannelRead::Kind::Message || read.kind == ChannelRead::Kind::Closed));
      if (read.kind == ChannelRead::Kind::Message) {
        CHECK(read.message->type() == wire::MessageType::Error);
        CHECK(wait_closed(c.get()));
      }
    }
  }

  // Every refused connection's session (if it had one) is gone; the others still work.
  idle.clear();
  CHECK(eventually([&] { return session_count(d) == baseline; }));
  require_serving(d, d.stub(), bystander);
  require_serving(d);
}

TEST_CASE("MapBuffer errors keep the channel usable", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  const int c = s.channel.get();

  send_raw(c, message_bytes(wire::MessageType::MapBuffer, 21, map_payload(4242)));
  expect_unknown_buffer(c, 4242, 21);
  send_raw(c, message_bytes(wire::MessageType::MapBuffer, 22, map_payload(0)));
  expect_unknown_buffer(c, 0, 22);
  // A payload of the wrong size is answered, and the channel stays open.
  send_raw(c, message_bytes(wire::MessageType::MapBuffer, 23, std::string(3, '\x01')));
  CHECK_THAT(read_error_message(c), Catch::Matchers::Contains("3 payload bytes, expected 8"));
  // A handle of another kind (a graph) is not a buffer.
  std::uint64_t buffer = 0, graph = 0;
  REQUIRE_OK(allocate(stub, s, 64, &buffer));
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 64, 1);
  REQUIRE_OK(prepare(stub, s, request, &graph));
  send_raw(c, message_bytes(wire::MessageType::MapBuffer, 24, map_payload(graph)));
  expect_unknown_buffer(c, graph, 24);
  // After all that the same channel still maps a real buffer (require_serving does).
  require_serving(d, stub, s);
}

TEST_CASE("descriptors passed to the daemon are closed, never leaked", "[daemon][robustness]") {
  TestDaemon d;
  const Session s = d.open_session();
  const std::size_t baseline_sessions = session_count(d);
  UniqueFd passed(eventfd(0, EFD_CLOEXEC));
  REQUIRE(passed.valid());
  UniqueFd second(eventfd(0, EFD_CLOEXEC));
  REQUIRE(second.valid());
  // Warm up the paths below once, so lazily created state is not counted as a leak.
  require_serving(d, d.stub(), s);
  {
    send_raw(s.channel.get(), message_bytes(wire::MessageType::MapBuffer, 1, map_payload(999)), {passed.get()});
    expect_unknown_buffer(s.channel.get(), 999, 1);
  }
  const std::size_t before = open_fd_count();

  // MapBuffer with an fd attached, on an open session: answered, the fd dropped.
  for (std::uint32_t i = 0; i < 300; ++i) {
    send_raw(s.channel.get(), message_bytes(wire::MessageType::MapBuffer, i, map_payload(999)), {passed.get()});
    expect_unknown_buffer(s.channel.get(), 999, i);
  }
  // Hello with an fd: the session opens (the fd is ignored) and ends with the connection.
  for (int i = 0; i < 50; ++i) {
    UniqueFd c = connect_session_channel(d);
    send_hello(c.get(), 1, passed.get());
    ChannelRead welcome = read_channel(c.get());
    REQUIRE(welcome.kind == ChannelRead::Kind::Message);
    REQUIRE(welcome.message->type() == wire::MessageType::Welcome);
    CHECK_FALSE(welcome.message->fd.valid());
  }
  // Two fds on one message, many fds, fds on garbage and on a zero-length record:
  // refused, and every fd closed.
  for (int i = 0; i < 30; ++i) {
    {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), message_bytes(wire::MessageType::Hello, 5, hello_payload()), {passed.get(), second.get()});
      expect_error_then_close(c.get(), "passed 2 file descriptors");
    }
    {
      UniqueFd c = connect_session_channel(d);
      const std::vector<int> many(40, passed.get());
      send_raw(c.get(), message_bytes(wire::MessageType::Hello, 5, hello_payload()), many);
      expect_error_then_close(c.get(), "file descriptors");
    }
    {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), "garbage", {passed.get()});
      expect_error_then_close(c.get(), "shorter than its 16-byte header");
    }
    {
      UniqueFd c = connect_session_channel(d);
      send_raw(c.get(), "", {passed.get()});
      expect_error_then_close(c.get(), "shorter than its 16-byte header");
    }
    {
      // On an open session, a message with two fds ends it.
      UniqueFd c = connect_session_channel(d);
      send_hello(c.get(), 1);
      ChannelRead welcome = read_channel(c.get());
      REQUIRE(welcome.kind == ChannelRead::Kind::Message);
      send_raw(c.get(), message_bytes(wire::MessageType::MapBuffer, 6, map_payload(1)), {passed.get(), second.get()});
      expect_error_then_close(c.get(), "passed 2 file descriptors");
    }
  }

  CHECK(eventually([&] { return session_count(d) == baseline_sessions; }));
  const bool settled = eventually([&] { return open_fd_count() <= before + 3; });
  INFO("open descriptors: " << open_fd_count() << ", before " << before);
  CHECK(settled);
  require_serving(d, d.stub(), s);
}

TEST_CASE("a client that never reads its replies does not stall the session channel", "[daemon][robustness]") {
  TestDaemon d;
  const Session s = d.open_session();
  const std::size_t baseline = session_count(d);
  // A flood of requests whose answers are never read: the daemon's replies pile up in
  // this socket's receive queue (a Unix socket holds only a few records).
  UniqueFd flood = connect_session_channel(d);
  send_hello(flood.get(), 1);
  timeval quick{0, 100 * 1000};
  REQUIRE(setsockopt(flood.get(), SOL_SOCKET, SO_SNDTIMEO, &quick, sizeof(quick)) == 0);
  int flooded = 0;
  for (; flooded < 500; ++flooded) {
    const std::string bytes = message_bytes(wire::MessageType::MapBuffer, static_cast<std::uint32_t>(flooded),
                                            map_payload(999));
    if (::send(flood.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) break;
  }
  INFO(flooded << " unread requests");

  // Meanwhile another client opens a session, and the bystander maps a buffer.
  UniqueFd other = connect_session_channel(d);
  timeval bounded{2, 0};
  REQUIRE(setsockopt(other.get(), SOL_SOCKET, SO_RCVTIMEO, &bounded, sizeof(bounded)) == 0);
  send_hello(other.get(), 1);
  ChannelRead welcome = read_channel(other.get());
  INFO("the second client's Hello: " << static_cast<int>(welcome.kind) << " " << welcome.error);
  CHECK(welcome.kind == ChannelRead::Kind::Message);

  // Releasing the flood (closing it) lets a stuck daemon go on; everything recovers.
  flood.reset();
  other.reset();
  CHECK(eventually([&] { return session_count(d) == baseline; }, 5000));
  require_serving(d, d.stub(), s);
}

TEST_CASE("closing the session channel ends the session and its token", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const std::size_t baseline = session_count(d);
  Session s = d.open_session();
  CHECK(session_count(d) == baseline + 1);
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 4096, &buffer));
  {
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    REQUIRE_OK(stub.GetSessionInfo(make_context(s).get(), request, &info));
    CHECK(info.session_id() == s.id);
  }

  s.channel.reset();
  auto token_dead = [&] {
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    return stub.GetSessionInfo(make_context(s).get(), request, &info).error_code() ==
           grpc::StatusCode::UNAUTHENTICATED;
  };
  CHECK(eventually(token_dead, 2000));
  CHECK_STATUS(allocate(stub, s, 64, nullptr), grpc::StatusCode::UNAUTHENTICATED, "session token");
  CHECK_STATUS(free_buffer(stub, s, buffer), grpc::StatusCode::UNAUTHENTICATED, "session token");
  CHECK(session_count(d) == baseline);
  {
    v1::ListSessionsRequest request;
    v1::ListSessionsResponse sessions;
    REQUIRE_OK(stub.ListSessions(make_context(std::nullopt).get(), request, &sessions));
    CHECK(sessions.sessions_size() == 0);
  }
  require_serving(d);
}

}  // namespace robustness
