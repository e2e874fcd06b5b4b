#include "daemon/service/session_channel_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "client/api/thread_name.h"

namespace accord::service {
namespace {

// 128 random bits as hex: the bearer token gRPC calls present.
std::string new_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  std::string token(wire::kTokenChars, '0');
  static const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof(bytes); ++i) {
    token[2 * i] = kHex[bytes[i] >> 4];
    token[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return token;
}

// False when the reply could not be sent (the client is gone, or it does not read its
// replies and its queue is full): the caller then drops the connection.
bool send_error(int fd, std::uint32_t request_id, const Status& status) {
  wire::ErrorPayload error;
  error.kind = static_cast<std::uint32_t>(status.kind());
  wire::set_text(error.message, status.message());
  return wire::send_payload(fd, wire::MessageType::Error, request_id, error).ok();
}

}  // namespace

Result<std::unique_ptr<SessionChannelServer>> SessionChannelServer::start(const SessionChannelOptions& options,
                                                                          engine::Engine& engine,
                                                                          SessionRegistry& sessions,
                                                                          const AccessPolicy& policy,
                                                                          RingService& rings) {
  auto listener = wire::listen_unix(options.path, SOCK_SEQPACKET, options.mode);
  if (!listener.ok()) return std::move(listener).status().annotate("session channel " + options.path);
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return internal_error("eventfd for the session channel failed");
  return std::unique_ptr<SessionChannelServer>(new SessionChannelServer(
      options, engine, sessions, policy, rings, std::move(listener).value(), std::move(wake)));
}

SessionChannelServer::SessionChannelServer(SessionChannelOptions options, engine::Engine& engine,
                                           SessionRegistry& sessions, const AccessPolicy& policy,
                                           RingService& rings, UniqueFd listener, UniqueFd wake)
    : options_(std::move(options)),
      engine_(engine),
      sessions_(sessions),
      policy_(policy),
      rings_(rings),
      listener_(std::move(listener)),
      wake_(std::move(wake)) {
  thread_ = std::thread([this] { run(); });
}

SessionChannelServer::~SessionChannelServer() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void SessionChannelServer::stop() noexcept {
  if (stopping_.exchange(true)) return;
  const std::uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
}

void SessionChannelServer::run() {
  name_this_thread("accord-channel");
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({wake_.get(), POLLIN, 0});
    fds.push_back({listener_.get(), POLLIN, 0});
    for (const auto& [fd, connection] : connections_) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("session channel poll failed: {}", std::strerror(errno));
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) accept_one();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (!serve(fds[i].fd)) drop(fds[i].fd);
    }
  }
  // Stopping: every session ends with its connection.
  while (!connections_.empty()) drop(connections_.begin()->first);
}

void SessionChannelServer::accept_one() {
  // Non-blocking connections: one poll thread serves every client, so a client that
  // stops reading its replies must never block it; such a client is dropped instead.
  auto accepted = wire::accept_unix(listener_.get(), /*nonblocking=*/true);
  if (!accepted.ok() || !accepted.value()) return;
  UniqueFd socket = std::move(*accepted.value());
  auto peer = wire::peer_credentials(socket.get());
  if (!peer.ok()) return;
  const bool refused = !policy_.allowed(peer.value());
  if (refused) spdlog::warn("session channel: refused pid {} uid {}", peer->pid, peer->uid);
  // A refused client is kept until its Hello arrives and is answered with the reason:
  // closing at once would reset the connection before the client reads the answer.
  const int fd = socket.get();
  connections_[fd] = Connection{std::move(socket), peer.value(), nullptr, refused};
}

bool SessionChannelServer::serve(int fd) {
  auto received = wire::receive_message(fd);
  if (!received.ok() && received.status().kind() == ErrorKind::Busy) return true;  // nothing waiting
  if (!received.ok()) {
    spdlog::warn("session channel: dropping a client that sent a bad message: {}", received.status().message());
    send_error(fd, 0, received.status());
    return false;
  }
  if (!received.value()) return false;  // EOF: the client exited or crashed
  const wire::ReceivedMessage& message = *received.value();
  if (const Connection& c = connections_.at(fd); c.refused) {
    send_error(fd, message.header.request_id, unsupported_error(policy_.refusal(c.peer)));
    return false;
  }
  switch (message.type()) {
    case wire::MessageType::Hello: return handle_hello(fd, message);
    case wire::MessageType::MapBuffer: return handle_map(fd, message);
    case wire::MessageType::CodeImage: return handle_code_image(fd, message);
    case wire::MessageType::OpenRing: return handle_open_ring(fd, message);
    case wire::MessageType::Goodbye: return false;
    default:
      send_error(fd, message.header.request_id,
                 invalid_error("unexpected session message type " + std::to_string(message.header.type)));
      return false;
  }
}

bool SessionChannelServer::handle_hello(int fd, const wire::ReceivedMessage& message) {
  Connection& connection = connections_.at(fd);
  if (connection.session) {
    send_error(fd, message.header.request_id, invalid_error("Hello sent twice on one session channel"));
    return false;
  }
  auto hello = message.as<wire::HelloPayload>();
  if (!hello.ok()) {
    send_error(fd, message.header.request_id, hello.status());
    return false;
  }
  // The label travels in protobuf strings, which must be UTF-8: keep printable ASCII only.
  std::string label = wire::get_text(hello->label);
  for (char& ch : label)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  // A client may ask for tighter limits than the daemon's, never looser.
  engine::SessionLimits limits = options_.limits;
  if (hello->max_submissions != 0 && hello->max_submissions < limits.max_submissions)
    limits.max_submissions = static_cast<std::size_t>(hello->max_submissions);
  if (hello->graph_slots != 0 && hello->graph_slots < limits.graph_slots)
    limits.graph_slots = static_cast<std::size_t>(hello->graph_slots);
  if (hello->memory_budget != 0 && (!limits.memory_budget || hello->memory_budget < *limits.memory_budget))
    limits.memory_budget = hello->memory_budget;
  // Priorities: anyone may go lower; above 0 only as far as [priorities] allows.
  const int allowed = options_.priorities.allowed(connection.peer.uid, connection.peer.gid);
  if (hello->priority > allowed && hello->priority > 0) {
    send_error(fd, message.header.request_id,
               unsupported_error("priority " + std::to_string(hello->priority) + " is above what uid " +
                                 std::to_string(connection.peer.uid) + " (gid " + std::to_string(connection.peer.gid) +
                                 ") may ask for: at most " + std::to_string(std::max(allowed, 0)) +
                                 " (accordd's [priorities] configuration)"));
    return false;
  }
  if (hello->priority < -engine::kMaxPriority) {
    send_error(fd, message.header.request_id,
               invalid_error("priority " + std::to_string(hello->priority) + " is below " +
                             std::to_string(-engine::kMaxPriority)));
    return false;
  }
  limits.priority = static_cast<int>(hello->priority);
  const auto listed = [](const std::vector<std::uint32_t>& ids, std::uint32_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  if (listed(options_.isolated_uids, connection.peer.uid)) limits.isolation = "uid:" + std::to_string(connection.peer.uid);
  else if (listed(options_.isolated_gids, connection.peer.gid))
    limits.isolation = "gid:" + std::to_string(connection.peer.gid);
  auto engine_session = engine_.open_session(limits, label);
  if (!engine_session.ok()) {
    send_error(fd, message.header.request_id, engine_session.status());
    return false;
  }
  auto session = std::make_shared<ServiceSession>(std::move(engine_session).value(), connection.peer, label,
                                                  new_token(), options_.max_objects);
  if (Status added = sessions_.add(session); !added.ok()) {
    send_error(fd, message.header.request_id, added);
    return false;
  }
  wire::WelcomePayload welcome;
  welcome.session_id = session->id();
  wire::set_text(welcome.token, session->token());
  welcome.max_submissions = limits.max_submissions;
  welcome.graph_slots = limits.graph_slots;
  welcome.memory_budget = limits.memory_budget.value_or(0);
  welcome.priority = limits.priority;
  welcome.max_message_bytes = options_.max_message_bytes;
  if (!wire::send_payload(fd, wire::MessageType::Welcome, message.header.request_id, welcome).ok()) {
    sessions_.close(session->id());
    return false;
  }
  connection.session = std::move(session);
  spdlog::info("session {} opened for pid {} uid {} ('{}')", connection.session->id(), connection.peer.pid,
               connection.peer.uid, label);
  return true;
}

bool SessionChannelServer::handle_map(int fd, const wire::ReceivedMessage& message) {
  Connection& connection = connections_.at(fd);
  const std::uint32_t id = message.header.request_id;
  if (!connection.session) {
    send_error(fd, id, invalid_error("MapBuffer before Hello"));
    return false;
  }
  auto request = message.as<wire::MapBufferPayload>();
  if (!request.ok()) return send_error(fd, id, request.status());
  engine::Ref<engine::Allocation> allocation = connection.session->buffer(request->buffer);
  if (!allocation) return send_error(fd, id, invalid_error("unknown buffer handle " + std::to_string(request->buffer)));
  const int memfd = allocation->memory().export_fd();
  if (memfd < 0 || allocation->host_address() == nullptr)
    return send_error(fd, id, unsupported_error("buffer handle " + std::to_string(request->buffer) + " (" +
                                                allocation->placement().to_string() + ") is not host mapped"));
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  wire::BufferFdPayload reply;
  reply.buffer = request->buffer;
  reply.bytes = allocation->bytes();
  reply.map_bytes = (allocation->bytes() + page - 1) / page * page;
  return wire::send_payload(fd, wire::MessageType::BufferFd, id, reply, memfd).ok();
}

bool SessionChannelServer::handle_code_image(int fd, const wire::ReceivedMessage& message) {
  Connection& connection = connections_.at(fd);
  const std::uint32_t id = message.header.request_id;
  if (!connection.session) {
    send_error(fd, id, invalid_error("CodeImage before Hello"));
    return false;
  }
  auto request = message.as<wire::CodeImagePayload>();
  if (!request.ok()) return send_error(fd, id, request.status());
  if (!message.fd) return send_error(fd, id, invalid_error("CodeImage without its memfd"));
  const int memfd = message.fd.get();
  // The client must not be able to change or shrink the pages while they are copied.
  constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
  const int seals = fcntl(memfd, F_GET_SEALS);
  if (seals < 0 || (seals & kSeals) != kSeals)
    return send_error(fd, id, invalid_error("code image memfd is not sealed against shrink, grow and write"));
  struct stat st {};
  if (fstat(memfd, &st) != 0 || st.st_size < 0)
    return send_error(fd, id, invalid_error("code image fd cannot be inspected"));
  const std::uint64_t bytes = request->bytes;
  if (bytes == 0 || bytes > wire::kMaxCodeImageBytes || bytes > static_cast<std::uint64_t>(st.st_size))
    return send_error(fd, id, invalid_error("code image of " + std::to_string(bytes) + " bytes in a memfd of " +
                                            std::to_string(st.st_size) + " bytes (at most " +
                                            std::to_string(wire::kMaxCodeImageBytes) + ")"));
  void* mapped = mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ, MAP_SHARED, memfd, 0);
  if (mapped == MAP_FAILED)
    return send_error(fd, id, busy_error(std::string("mapping a code image failed: ") + std::strerror(errno)));
  const auto* begin = static_cast<const std::byte*>(mapped);
  std::vector<std::byte> image(begin, begin + bytes);
  munmap(mapped, static_cast<std::size_t>(bytes));
  auto upload = connection.session->add_upload(std::move(image));  // the fd closes with `message`
  if (!upload.ok()) return send_error(fd, id, upload.status());
  wire::CodeImageUploadedPayload reply;
  reply.upload = upload.value();
  reply.bytes = bytes;
  return wire::send_payload(fd, wire::MessageType::CodeImageUploaded, id, reply).ok();
}

bool SessionChannelServer::handle_open_ring(int fd, const wire::ReceivedMessage& message) {
  Connection& connection = connections_.at(fd);
  const std::uint32_t id = message.header.request_id;
  if (!connection.session) {
    send_error(fd, id, invalid_error("OpenRing before Hello"));
    return false;
  }
  auto request = message.as<wire::OpenRingPayload>();
  if (!request.ok()) return send_error(fd, id, request.status());
  auto ring = rings_.open(connection.session, request->features);
  if (!ring.ok()) return send_error(fd, id, ring.status());
  wire::RingFdPayload reply;
  reply.sq_capacity = ring->geometry.sq_capacity;
  reply.cq_capacity = ring->geometry.cq_capacity;
  return wire::send_payload(fd, wire::MessageType::RingFd, id, reply, ring->fd).ok();
}

void SessionChannelServer::drop(int fd) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  if (it->second.session) {
    rings_.close(it->second.session->id());
    spdlog::info("session {} closed (pid {})", it->second.session->id(), it->second.peer.pid);
    sessions_.close(it->second.session->id());
  }
  connections_.erase(it);
}

}  // namespace accord::service
