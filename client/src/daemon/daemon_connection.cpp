#include "client/src/daemon/daemon_connection.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "proto/wire/session_channel.h"

namespace accord::detail {
namespace {

std::string program_label() {
  char path[256] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "client";
  const char* base = std::strrchr(path, '/');
  return base ? base + 1 : path;
}

// The answer to a request on the session channel: accordd's Error answers become the
// Status they carry, and a closed channel is DeviceLost.
Result<wire::ReceivedMessage> receive_answer(int session) {
  auto reply = wire::receive_message(session);
  if (!reply.ok()) return std::move(reply).status();
  if (!reply.value()) return device_lost_error("accordd closed the session channel");
  wire::ReceivedMessage& message = *reply.value();
  if (message.type() == wire::MessageType::Error) {
    auto error = message.as<wire::ErrorPayload>();
    if (!error.ok()) return std::move(error).status();
    return Status::error(static_cast<ErrorKind>(error->kind), wire::get_text(error->message));
  }
  return std::move(message);
}

}  // namespace

Status from_grpc(const grpc::Status& status, std::string_view call) {
  if (status.ok()) return Status();
  const std::string message = std::string(call) + ": " + status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::FAILED_PRECONDITION: return invalid_error(message);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::DEADLINE_EXCEEDED: return busy_error(message);
    case grpc::StatusCode::DATA_LOSS: return device_lost_error(message);
    case grpc::StatusCode::UNAVAILABLE: return device_lost_error(message + " (is accordd running?)");
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::PERMISSION_DENIED: return unsupported_error(message);
    case grpc::StatusCode::CANCELLED: return cancelled_error(message);
    case grpc::StatusCode::ABORTED: return execution_error(message);
    default: return internal_error(message);
  }
}

Result<std::unique_ptr<DaemonConnection>> DaemonConnection::open(const std::string& grpc_socket,
                                                                 const std::string& session_socket,
                                                                 const RuntimeOptions& options) {
  std::unique_ptr<DaemonConnection> c(new DaemonConnection());
  auto session = wire::connect_unix(session_socket, SOCK_SEQPACKET);
  if (!session.ok())
    return device_lost_error("cannot reach accordd's session channel at " + session_socket + ": " +
                             std::string(session.status().message()));
  c->session_ = std::move(session).value();
  wire::HelloPayload hello;
  wire::set_text(hello.label, program_label());
  hello.max_submissions = options.max_submissions;
  hello.graph_slots = options.graph_slots;
  hello.memory_budget = options.memory_budget.value_or(0);
  hello.priority = options.priority;
  // Even when sending fails, read: a daemon that refused us may have answered already.
  const Status sent = wire::send_payload(c->session_.get(), wire::MessageType::Hello, 0, hello);
  auto reply = wire::receive_message(c->session_.get());
  if (!sent.ok() && (!reply.ok() || !reply.value())) return sent;
  if (!reply.ok()) return std::move(reply).status();
  if (!reply.value()) return device_lost_error("accordd closed the session channel at " + session_socket);
  const wire::ReceivedMessage& message = *reply.value();
  if (message.type() == wire::MessageType::Error) {
    auto error = message.as<wire::ErrorPayload>();
    if (!error.ok()) return std::move(error).status();
    return Status::error(static_cast<ErrorKind>(error->kind), "accordd refused the session: " + wire::get_text(error->message));
  }
  if (message.type() != wire::MessageType::Welcome)
    return invalid_error("accordd answered Hello with message type " + std::to_string(message.header.type));
  auto welcome = message.as<wire::WelcomePayload>();
  if (!welcome.ok()) return std::move(welcome).status();
  c->session_id_ = welcome->session_id;
  c->token_ = wire::get_text(welcome->token);
  c->max_message_bytes_ = welcome->max_message_bytes;
  c->priority_ = static_cast<int>(welcome->priority);
  c->max_submissions_ = welcome->max_submissions;
  c->graph_slots_ = welcome->graph_slots;
  c->memory_budget_ = welcome->memory_budget;
  if (options.submission_ring) {
    // A daemon with no room for another ring (Busy) or none at all (Unsupported) still
    // serves the session: every call then goes through gRPC.
    const Status ring = c->open_ring(welcome->max_submissions, options.ring_spin,
                                     options.forecast_sleep != ForecastSleep::Never);
    if (!ring.ok() && ring.kind() != ErrorKind::Busy && ring.kind() != ErrorKind::Unsupported) return ring;
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  c->channel_ = grpc::CreateCustomChannel("unix:" + grpc_socket, grpc::InsecureChannelCredentials(), args);
  c->stub_ = v1::Accord::NewStub(c->channel_);
  return c;
}

Status DaemonConnection::open_ring(std::uint64_t max_submissions, std::chrono::microseconds spin,
                                   bool forecast_sleep) {
  const std::lock_guard lock(session_mu_);
  const std::uint32_t id = next_request_++;
  ACCORD_RETURN_IF_ERROR(
      wire::send_payload(session_.get(), wire::MessageType::OpenRing, id,
                         wire::OpenRingPayload{wire::kRingFeatureCombinedAnswers | wire::kRingFeatureQuietAcks}));
  auto answer = receive_answer(session_.get());
  if (!answer.ok()) return std::move(answer).status().annotate("opening the submission ring");
  wire::ReceivedMessage& message = answer.value();
  if (message.type() != wire::MessageType::RingFd || !message.fd)
    return invalid_error("accordd answered OpenRing with message type " + std::to_string(message.header.type));
  // Tickets: every submission accordd lets this session have pending, and as many again
  // held by completions not yet dropped; beyond that submissions go through gRPC.
  ACCORD_ASSIGN_OR_RETURN(ring_, DaemonRing::attach(std::move(message.fd), 2 * max_submissions, session_.get(), spin,
                                                      forecast_sleep));
  return Status();
}

RuntimeOptions DaemonConnection::granted(const RuntimeOptions& asked) const {
  RuntimeOptions options = asked;
  // An accordd that sent 0 for a capacity (none does today) leaves what was asked.
  if (max_submissions_ != 0) options.max_submissions = static_cast<std::size_t>(max_submissions_);
  if (graph_slots_ != 0) options.graph_slots = static_cast<std::size_t>(graph_slots_);
  options.memory_budget = memory_budget_ != 0 ? std::optional<std::uint64_t>(memory_budget_) : std::nullopt;
  options.priority = priority_;
  return options;
}

void DaemonConnection::prepare(grpc::ClientContext& context) const {
  context.AddMetadata(std::string(wire::kSessionMetadataKey), token_);
}

Result<std::byte*> DaemonConnection::map_buffer(std::uint64_t handle, std::size_t& map_bytes) {
  std::lock_guard lock(session_mu_);
  const std::uint32_t id = next_request_++;
  wire::MapBufferPayload request;
  request.buffer = handle;
  ACCORD_RETURN_IF_ERROR(wire::send_payload(session_.get(), wire::MessageType::MapBuffer, id, request));
  auto answer = receive_answer(session_.get());
  if (!answer.ok()) return std::move(answer).status();
  wire::ReceivedMessage& message = answer.value();
  auto payload = message.as<wire::BufferFdPayload>();
  if (!payload.ok()) return std::move(payload).status();
  if (message.type() != wire::MessageType::BufferFd || payload->buffer != handle || !message.fd)
    return invalid_error("accordd answered MapBuffer for buffer " + std::to_string(handle) + " without its fd");
  map_bytes = static_cast<std::size_t>(payload->map_bytes);
  void* address = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, message.fd.get(), 0);
  if (address == MAP_FAILED)
    return busy_error("mapping buffer " + std::to_string(handle) + " failed: " + std::strerror(errno));
  return static_cast<std::byte*>(address);  // the fd closes here; the mapping stays
}

}  // namespace accord::detail

namespace accord::detail {

Result<std::uint64_t> DaemonConnection::upload_image(std::span<const std::byte> image) {
  UniqueFd memfd(memfd_create("accord-code-image", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd) return busy_error(std::string("memfd_create for a code image failed: ") + std::strerror(errno));
  std::size_t written = 0;
  while (written < image.size()) {
    const ssize_t n = write(memfd.get(), image.data() + written, image.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return busy_error(std::string("writing a code image to its memfd failed: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  // Sealed, so the daemon can copy it without the client changing it underneath.
  if (fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return busy_error(std::string("sealing a code image memfd failed: ") + std::strerror(errno));
  std::lock_guard lock(session_mu_);
  const std::uint32_t id = next_request_++;
  wire::CodeImagePayload request;
  request.bytes = image.size();
  ACCORD_RETURN_IF_ERROR(wire::send_payload(session_.get(), wire::MessageType::CodeImage, id, request, memfd.get()));
  auto answer = receive_answer(session_.get());
  if (!answer.ok()) return std::move(answer).status();
  wire::ReceivedMessage& message = answer.value();
  auto payload = message.as<wire::CodeImageUploadedPayload>();
  if (!payload.ok()) return std::move(payload).status();
  if (message.type() != wire::MessageType::CodeImageUploaded || payload->bytes != image.size())
    return invalid_error("accordd answered a code image upload with message type " +
                         std::to_string(message.header.type));
  return payload->upload;
}

}  // namespace accord::detail
