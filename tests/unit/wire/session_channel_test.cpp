// The session channel's framing and fd passing (proto/wire) on real sockets: socketpairs
// for messages, a temp directory for listen/connect/accept. Hostile input is written
// with raw send()/sendmsg() so the tests see exactly what a malicious peer could send.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "proto/wire/session_channel.h"

using accord::ErrorKind;
using accord::Status;
using accord::UniqueFd;
using namespace accord::wire;
using Catch::Contains;

namespace {

struct SocketPair {
  UniqueFd a;
  UniqueFd b;
};

SocketPair make_socket_pair(int type = SOCK_SEQPACKET) {
  int fds[2] = {-1, -1};
  REQUIRE(::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) == 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// A temporary directory removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "accord-wire-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(const char* name) const { return (path / name).string(); }
};

std::size_t open_fd_count() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

UniqueFd make_memfd(std::size_t bytes) {
  UniqueFd fd(::memfd_create("wire-test", MFD_CLOEXEC));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(bytes)) == 0);
  return fd;
}

// Sends `bytes` as one raw record, with `fds` in one SCM_RIGHTS message.
void send_raw(int socket, const std::vector<std::byte>& bytes, const std::vector<int>& fds = {}) {
  iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()) + sizeof(cmsghdr));
  if (!fds.empty()) {
    // std::vector<char> storage is suitably aligned for cmsghdr (operator new alignment).
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  REQUIRE(::sendmsg(socket, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
}

std::vector<std::byte> frame(const MessageHeader& header, std::size_t payload_bytes) {
  std::vector<std::byte> bytes(sizeof(header) + payload_bytes, std::byte{0x5a});
  std::memcpy(bytes.data(), &header, sizeof(header));
  return bytes;
}

ReceivedMessage receive_ok(int socket) {
  auto received = receive_message(socket);
  INFO(received.status().to_string());
  REQUIRE(received.ok());
  REQUIRE(received->has_value());
  return std::move(**received);
}

void require_invalid(int socket, const std::string& fragment) {
  auto received = receive_message(socket);
  REQUIRE_FALSE(received.ok());
  CHECK(received.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(received.status().message()), Contains(fragment));
}

// The channel still frames correctly after a rejected message.
void require_channel_still_works(SocketPair& pair) {
  MapBufferPayload map;
  map.buffer = 77;
  REQUIRE(send_payload(pair.a.get(), MessageType::MapBuffer, 9, map).ok());
  ReceivedMessage message = receive_ok(pair.b.get());
  CHECK(message.type() == MessageType::MapBuffer);
  auto decoded = message.as<MapBufferPayload>();
  REQUIRE(decoded.ok());
  CHECK(decoded->buffer == 77);
}

int fd_flags(int fd) { return ::fcntl(fd, F_GETFD); }
int status_flags(int fd) { return ::fcntl(fd, F_GETFL); }

}  // namespace

TEST_CASE("every payload type survives a round trip", "[wire]") {
  SocketPair pair = make_socket_pair();

  HelloPayload hello;
  set_text(hello.label, "trainer");
  REQUIRE(send_payload(pair.a.get(), MessageType::Hello, 1, hello).ok());
  ReceivedMessage m = receive_ok(pair.b.get());
  CHECK(m.type() == MessageType::Hello);
  CHECK(m.header.request_id == 1);
  CHECK(m.header.magic == kMagic);
  CHECK(m.header.version == kProtocolVersion);
  CHECK_FALSE(m.fd.valid());
  auto got_hello = m.as<HelloPayload>();
  REQUIRE(got_hello.ok());
  CHECK(get_text(got_hello->label) == "trainer");

  WelcomePayload welcome;
  welcome.session_id = 0x1122334455667788ULL;
  set_text(welcome.token, "0123456789abcdef0123456789abcdef");
  welcome.max_submissions = 64;
  welcome.graph_slots = 8;
  welcome.memory_budget = 1ULL << 30;
  REQUIRE(send_payload(pair.b.get(), MessageType::Welcome, 1, welcome).ok());
  m = receive_ok(pair.a.get());
  CHECK(m.type() == MessageType::Welcome);
  auto got_welcome = m.as<WelcomePayload>();
  REQUIRE(got_welcome.ok());
  CHECK(got_welcome->session_id == welcome.session_id);
  CHECK(get_text(got_welcome->token) == "0123456789abcdef0123456789abcdef");
  CHECK(got_welcome->max_submissions == 64);
  CHECK(got_welcome->graph_slots == 8);
  CHECK(got_welcome->memory_budget == 1ULL << 30);

  MapBufferPayload map;
  map.buffer = 42;
  REQUIRE(send_payload(pair.a.get(), MessageType::MapBuffer, 2, map).ok());
  m = receive_ok(pair.b.get());
  CHECK(m.type() == MessageType::MapBuffer);
  CHECK(m.header.request_id == 2);
  CHECK(m.as<MapBufferPayload>()->buffer == 42);

  ErrorPayload error;
  error.kind = static_cast<std::uint32_t>(ErrorKind::Invalid);
  set_text(error.message, "buffer 42 is not host visible");
  REQUIRE(send_payload(pair.b.get(), MessageType::Error, 2, error).ok());
  m = receive_ok(pair.a.get());
  CHECK(m.type() == MessageType::Error);
  auto got_error = m.as<ErrorPayload>();
  REQUIRE(got_error.ok());
  CHECK(got_error->kind == static_cast<std::uint32_t>(ErrorKind::Invalid));
  CHECK(get_text(got_error->message) == "buffer 42 is not host visible");

  REQUIRE(send_message(pair.a.get(), MessageType::Goodbye, 3, {}).ok());
  m = receive_ok(pair.b.get());
  CHECK(m.type() == MessageType::Goodbye);
  CHECK(m.payload_bytes == 0);
  CHECK(m.header.payload_bytes == 0);
}

TEST_CASE("as<T> refuses a payload of the wrong size", "[wire]") {
  SocketPair pair = make_socket_pair();
  MapBufferPayload map;
  REQUIRE(send_payload(pair.a.get(), MessageType::Hello, 5, map).ok());
  ReceivedMessage m = receive_ok(pair.b.get());
  auto hello = m.as<HelloPayload>();
  REQUIRE_FALSE(hello.ok());
  CHECK(hello.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(hello.status().message()), Contains(std::to_string(sizeof(MapBufferPayload)) + " payload bytes, expected " +
                                                        std::to_string(sizeof(HelloPayload))));
}

TEST_CASE("a memfd passed with BufferFd arrives as a working, close-on-exec fd", "[wire]") {
  SocketPair pair = make_socket_pair();
  UniqueFd memfd = make_memfd(4096);

  BufferFdPayload payload;
  payload.buffer = 7;
  payload.bytes = 100;
  payload.map_bytes = 4096;
  REQUIRE(send_payload(pair.a.get(), MessageType::BufferFd, 11, payload, memfd.get()).ok());
  // The sender keeps its own descriptor.
  CHECK(fd_flags(memfd.get()) >= 0);

  ReceivedMessage m = receive_ok(pair.b.get());
  CHECK(m.type() == MessageType::BufferFd);
  REQUIRE(m.fd.valid());
  CHECK(m.fd.get() != memfd.get());
  CHECK((fd_flags(m.fd.get()) & FD_CLOEXEC) != 0);
  auto got = m.as<BufferFdPayload>();
  REQUIRE(got.ok());
  CHECK(got->buffer == 7);
  CHECK(got->bytes == 100);
  CHECK(got->map_bytes == 4096);

  // Same file: what one side writes, the other reads, in both directions.
  const char hello[] = "through the sender";
  REQUIRE(::pwrite(memfd.get(), hello, sizeof(hello), 0) == static_cast<ssize_t>(sizeof(hello)));
  char read_back[sizeof(hello)] = {};
  REQUIRE(::pread(m.fd.get(), read_back, sizeof(read_back), 0) == static_cast<ssize_t>(sizeof(hello)));
  CHECK(std::string(read_back) == hello);

  void* mapped = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd.get(), 0);
  REQUIRE(mapped != MAP_FAILED);
  std::memcpy(static_cast<char*>(mapped) + 100, "via map", 8);
  char via_map[8] = {};
  REQUIRE(::pread(memfd.get(), via_map, sizeof(via_map), 100) == 8);
  CHECK(std::string(via_map) == "via map");
  ::munmap(mapped, 4096);
}

TEST_CASE("message boundaries are preserved", "[wire]") {
  SocketPair pair = make_socket_pair();
  for (std::uint32_t i = 0; i < 5; ++i) {
    std::vector<std::byte> payload(i * 100, std::byte(i));
    REQUIRE(send_message(pair.a.get(), MessageType::Error, i, payload).ok());
  }
  for (std::uint32_t i = 0; i < 5; ++i) {
    ReceivedMessage m = receive_ok(pair.b.get());
    CHECK(m.header.request_id == i);
    REQUIRE(m.payload_bytes == i * 100);
    for (std::size_t j = 0; j < m.payload_bytes; ++j) REQUIRE(m.payload[j] == std::byte(i));
  }
}

TEST_CASE("the largest payload fits and one byte more is refused before sending", "[wire]") {
  SocketPair pair = make_socket_pair();
  const std::size_t largest = kMaxMessageBytes - sizeof(MessageHeader);
  std::vector<std::byte> payload(largest, std::byte{1});
  REQUIRE(send_message(pair.a.get(), MessageType::Error, 1, payload).ok());
  CHECK(receive_ok(pair.b.get()).payload_bytes == largest);

  payload.push_back(std::byte{2});
  Status status = send_message(pair.a.get(), MessageType::Error, 2, payload);
  REQUIRE_FALSE(status.ok());
  CHECK(status.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(status.message()), Contains("payload bytes"));
}

TEST_CASE("an orderly close reads as an empty optional", "[wire]") {
  SocketPair pair = make_socket_pair();
  REQUIRE(send_message(pair.a.get(), MessageType::Goodbye, 1, {}).ok());
  pair.a.reset();
  CHECK(receive_ok(pair.b.get()).type() == MessageType::Goodbye);
  auto eof = receive_message(pair.b.get());
  REQUIRE(eof.ok());
  CHECK_FALSE(eof->has_value());
}

TEST_CASE("sending to a closed peer is Invalid, not SIGPIPE", "[wire]") {
  SocketPair pair = make_socket_pair();
  pair.b.reset();
  Status status = send_message(pair.a.get(), MessageType::Goodbye, 1, {});
  REQUIRE_FALSE(status.ok());
  CHECK(status.kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(status.message()), Contains("session channel closed"));
}

TEST_CASE("garbage is Invalid, names the problem, and the channel keeps working", "[wire]") {
  SocketPair pair = make_socket_pair();
  MessageHeader good;
  good.type = static_cast<std::uint16_t>(MessageType::MapBuffer);
  good.payload_bytes = sizeof(MapBufferPayload);

  SECTION("random bytes") {
    std::mt19937 random(1234);
    std::vector<std::byte> bytes(200);
    for (auto& b : bytes) b = static_cast<std::byte>(random());
    send_raw(pair.a.get(), bytes);
    require_invalid(pair.b.get(), "bad magic");
  }
  SECTION("a message shorter than the header") {
    send_raw(pair.a.get(), std::vector<std::byte>(7, std::byte{0}));
    require_invalid(pair.b.get(), "shorter than its 16-byte header");
  }
  SECTION("wrong magic") {
    MessageHeader bad = good;
    bad.magic = 0xdeadbeef;
    send_raw(pair.a.get(), frame(bad, sizeof(MapBufferPayload)));
    require_invalid(pair.b.get(), "bad magic");
  }
  SECTION("wrong version") {
    MessageHeader bad = good;
    bad.version = kProtocolVersion + 1;
    send_raw(pair.a.get(), frame(bad, sizeof(MapBufferPayload)));
    require_invalid(pair.b.get(), "protocol version 2");
  }
  SECTION("payload size disagrees with the header") {
    send_raw(pair.a.get(), frame(good, sizeof(MapBufferPayload) + 3));
    require_invalid(pair.b.get(), "says " + std::to_string(sizeof(MapBufferPayload)) + " payload bytes, but " +
                                      std::to_string(sizeof(MapBufferPayload) + 3) + " arrived");
    MessageHeader bad = good;
    bad.payload_bytes = 1u << 31;
    send_raw(pair.a.get(), frame(bad, 0));
    require_invalid(pair.b.get(), "payload bytes, but 0 arrived");
  }
  SECTION("an oversize message") {
    MessageHeader bad = good;
    bad.payload_bytes = static_cast<std::uint32_t>(kMaxMessageBytes * 2);
    send_raw(pair.a.get(), frame(bad, kMaxMessageBytes * 2));
    require_invalid(pair.b.get(), "larger than 4096 bytes");
  }
  SECTION("a message one byte over kMaxMessageBytes") {
    send_raw(pair.a.get(), frame(good, kMaxMessageBytes + 1 - sizeof(MessageHeader)));
    require_invalid(pair.b.get(), "larger than 4096 bytes");
  }
  require_channel_still_works(pair);
}

TEST_CASE("a message passing two fds is Invalid and both received fds are closed", "[wire]") {
  SocketPair pair = make_socket_pair();
  UniqueFd first = make_memfd(4096);
  UniqueFd second = make_memfd(4096);
  MessageHeader header;
  header.type = static_cast<std::uint16_t>(MessageType::BufferFd);
  header.payload_bytes = sizeof(BufferFdPayload);

  const std::size_t before = open_fd_count();
  send_raw(pair.a.get(), frame(header, sizeof(BufferFdPayload)), {first.get(), second.get()});
  require_invalid(pair.b.get(), "passed 2 file descriptors; at most one is allowed");
  CHECK(open_fd_count() == before);
  require_channel_still_works(pair);
}

TEST_CASE("fds riding on a rejected or oversized control message never leak", "[wire]") {
  SocketPair pair = make_socket_pair();
  UniqueFd memfd = make_memfd(4096);
  MessageHeader header;
  header.type = static_cast<std::uint16_t>(MessageType::BufferFd);
  header.payload_bytes = sizeof(BufferFdPayload);
  const std::size_t before = open_fd_count();

  SECTION("one fd with a bad magic") {
    MessageHeader bad = header;
    bad.magic = 1;
    send_raw(pair.a.get(), frame(bad, sizeof(BufferFdPayload)), {memfd.get()});
    require_invalid(pair.b.get(), "bad magic");
  }
  SECTION("one fd with a zero-length message") {
    send_raw(pair.a.get(), {}, {memfd.get()});
    require_invalid(pair.b.get(), "shorter than its 16-byte header");
  }
  SECTION("more fds than the receive buffer holds") {
    std::vector<int> many(40, memfd.get());
    send_raw(pair.a.get(), frame(header, sizeof(BufferFdPayload)), many);
    require_invalid(pair.b.get(), "more file descriptors than fit");
  }
  CHECK(open_fd_count() == before);
  require_channel_still_works(pair);
}

TEST_CASE("peer_credentials reports our own uid, gid and pid", "[wire]") {
  SocketPair pair = make_socket_pair();
  auto credentials = peer_credentials(pair.b.get());
  REQUIRE(credentials.ok());
  CHECK(credentials->uid == ::getuid());
  CHECK(credentials->gid == ::getgid());
  CHECK(credentials->pid == ::getpid());

  UniqueFd unconnected(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  REQUIRE(unconnected.valid());
  auto none = peer_credentials(unconnected.get());
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().kind() == ErrorKind::Invalid);
}

TEST_CASE("listen_unix applies the mode, and connect/accept carry messages", "[wire]") {
  TempDir dir;
  const std::string path = dir.file("session.sock");
  auto listener = listen_unix(path, SOCK_SEQPACKET, 0640);
  REQUIRE(listener.ok());
  CHECK((fd_flags(listener->get()) & FD_CLOEXEC) != 0);
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK(S_ISSOCK(info.st_mode));
  CHECK((info.st_mode & 07777) == 0640);

  auto client = connect_unix(path, SOCK_SEQPACKET);
  REQUIRE(client.ok());
  CHECK((fd_flags(client->get()) & FD_CLOEXEC) != 0);
  auto accepted = accept_unix(listener->get(), false);
  REQUIRE(accepted.ok());
  REQUIRE(accepted->has_value());
  UniqueFd server = std::move(**accepted);
  CHECK((fd_flags(server.get()) & FD_CLOEXEC) != 0);
  CHECK((status_flags(server.get()) & O_NONBLOCK) == 0);

  HelloPayload hello;
  set_text(hello.label, "over a path");
  REQUIRE(send_payload(client->get(), MessageType::Hello, 1, hello).ok());
  CHECK(get_text(receive_ok(server.get()).as<HelloPayload>()->label) == "over a path");
  auto credentials = peer_credentials(server.get());
  REQUIRE(credentials.ok());
  CHECK(credentials->pid == ::getpid());
}

TEST_CASE("listen_unix replaces a stale socket file but never another file", "[wire]") {
  TempDir dir;
  const std::string path = dir.file("stale.sock");
  {
    auto first = listen_unix(path, SOCK_SEQPACKET, 0600);
    REQUIRE(first.ok());
  }  // closed: the file stays behind, as after a crash
  REQUIRE(std::filesystem::exists(path));
  auto second = listen_unix(path, SOCK_SEQPACKET, 0660);
  REQUIRE(second.ok());
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0660);
  CHECK(connect_unix(path, SOCK_SEQPACKET).ok());

  const std::string regular = dir.file("not-a-socket");
  {
    std::ofstream out(regular);
    out << "keep me";
  }
  auto refused = listen_unix(regular, SOCK_SEQPACKET, 0660);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(refused.status().message()), Contains("is not a socket"));
  CHECK(std::filesystem::file_size(regular) == 7);
}

TEST_CASE("socket paths that do not fit or name nothing are Invalid", "[wire]") {
  const std::string long_path = "/tmp/" + std::string(200, 'x');
  auto listened = listen_unix(long_path, SOCK_SEQPACKET, 0600);
  REQUIRE_FALSE(listened.ok());
  CHECK(listened.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(listened.status().message()), Contains("fit"));
  auto connected = connect_unix(long_path, SOCK_SEQPACKET);
  REQUIRE_FALSE(connected.ok());
  CHECK(connected.status().kind() == ErrorKind::Invalid);
  CHECK_FALSE(listen_unix("", SOCK_SEQPACKET, 0600).ok());
}

TEST_CASE("connect_unix to a path nobody listens on is Unsupported", "[wire]") {
  TempDir dir;
  auto connected = connect_unix(dir.file("absent.sock"), SOCK_SEQPACKET);
  REQUIRE_FALSE(connected.ok());
  CHECK(connected.status().kind() == ErrorKind::Unsupported);
}

TEST_CASE("non-blocking accept returns empty when nothing waits", "[wire]") {
  TempDir dir;
  const std::string path = dir.file("nb.sock");
  auto listener = listen_unix(path, SOCK_SEQPACKET | SOCK_NONBLOCK, 0600);
  REQUIRE(listener.ok());
  CHECK((status_flags(listener->get()) & O_NONBLOCK) != 0);

  auto nothing = accept_unix(listener->get(), true);
  REQUIRE(nothing.ok());
  CHECK_FALSE(nothing->has_value());

  auto client = connect_unix(path, SOCK_SEQPACKET);
  REQUIRE(client.ok());
  auto accepted = accept_unix(listener->get(), true);
  REQUIRE(accepted.ok());
  REQUIRE(accepted->has_value());
  const UniqueFd& server = **accepted;
  CHECK((status_flags(server.get()) & O_NONBLOCK) != 0);
  CHECK((fd_flags(server.get()) & FD_CLOEXEC) != 0);

  // A non-blocking channel with nothing to read is Busy, not an error of the peer's.
  auto empty = receive_message(server.get());
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(empty.status().message()), Contains("no message waiting"));
}

TEST_CASE("set_text and get_text never overrun a fixed field", "[wire]") {
  std::array<char, 8> field{};
  set_text(field, "much longer than eight");
  CHECK(field[7] == '\0');
  CHECK(get_text(field) == "much lo");

  set_text(field, "ab");
  CHECK(get_text(field) == "ab");
  for (std::size_t i = 2; i < field.size(); ++i) CHECK(field[i] == '\0');

  // A peer's field with no NUL at all: read up to the end and no further.
  field.fill('z');
  CHECK(get_text(field) == std::string(8, 'z'));

  std::array<char, 1> tiny{};
  set_text(tiny, "x");
  CHECK(tiny[0] == '\0');
  CHECK(get_text(tiny).empty());
}
