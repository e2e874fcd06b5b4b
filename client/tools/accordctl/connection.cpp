#include "client/tools/accordctl/connection.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cmath>

#include "proto/wire/session_channel.h"
#include "proto/wire/session_messages.h"

namespace accord::ctl {
namespace {

std::chrono::system_clock::duration to_duration(double seconds) {
  return std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds));
}

std::string unreachable(const std::string& path, std::string_view why) {
  return "cannot reach accordd at " + path + ": " + std::string(why);
}

}  // namespace

Connection::Connection(GlobalOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments arguments;
  // A finished trace carries its events twice (messages and Chrome JSON): tens of MiB at
  // a large --capacity, past gRPC's 4 MiB default for received messages.
  arguments.SetMaxReceiveMessageSize(-1);
  channel_ = grpc::CreateCustomChannel("unix:" + options_.socket, grpc::InsecureChannelCredentials(), arguments);
  stub_ = v1::Accord::NewStub(channel_);
}

Connection::~Connection() {
  if (session_channel_) (void)wire::send_message(session_channel_.get(), wire::MessageType::Goodbye, 0, {});
}

Status Connection::open_session(std::string_view label) {
  const std::string& path = options_.session_socket;
  auto socket = wire::connect_unix(path, SOCK_SEQPACKET);
  if (!socket.ok()) return invalid_error(unreachable(path, socket.status().message()));
  // SO_RCVTIMEO bounds the wait for Welcome: a wedged daemon must not hang the tool.
  const double timeout = options_.timeout_seconds;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout);
  tv.tv_usec = static_cast<suseconds_t>((timeout - std::floor(timeout)) * 1e6);
  (void)::setsockopt(socket->get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

  wire::HelloPayload hello;
  wire::set_text(hello.label, label);
  if (Status sent = wire::send_payload(socket->get(), wire::MessageType::Hello, 1, hello); !sent.ok())
    return invalid_error(unreachable(path, sent.message()));
  auto received = wire::receive_message(socket->get());
  if (!received.ok()) {
    if (received.status().kind() == ErrorKind::Busy)
      return invalid_error("accordd at " + path + " did not answer Hello within --timeout");
    return invalid_error("session channel " + path + ": " + std::string(received.status().message()));
  }
  if (!received.value()) return invalid_error("accordd at " + path + " closed the session channel before Welcome");
  const wire::ReceivedMessage& message = *received.value();
  if (message.type() == wire::MessageType::Error) {
    auto error = message.as<wire::ErrorPayload>();
    const std::string why = error.ok() ? std::string(to_string(static_cast<ErrorKind>(error->kind))) + ": " +
                                             wire::get_text(error->message)
                                       : std::string(error.status().message());
    return invalid_error("accordd at " + path + " refused the session: " + why);
  }
  if (message.type() != wire::MessageType::Welcome)
    return invalid_error("session channel " + path + ": expected Welcome, got message type " +
                         std::to_string(message.header.type));
  auto welcome = message.as<wire::WelcomePayload>();
  if (!welcome.ok()) return invalid_error("session channel " + path + ": " + std::string(welcome.status().message()));
  token_ = wire::get_text(welcome->token);
  session_id_ = welcome->session_id;
  session_channel_ = std::move(socket).value();
  return Status();
}

Result<v1::CompletionEvent> Connection::wait_completion(std::uint64_t completion) {
  grpc::ClientContext client_context;
  prepare(client_context);
  v1::WaitCompletionRequest request;
  request.set_completion(completion);
  std::unique_ptr<grpc::ClientReader<v1::CompletionEvent>> reader = stub_->WaitCompletion(&client_context, request);
  v1::CompletionEvent event;
  const bool got = reader->Read(&event);
  // Drain the stream so Finish() reports the server's status rather than our early stop.
  v1::CompletionEvent extra;
  while (reader->Read(&extra)) {
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return failure(status, "completion " + std::to_string(completion));
  if (!got) return invalid_error("INTERNAL: completion " + std::to_string(completion) + ": the stream ended without an event");
  return event;
}

void Connection::prepare(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() + to_duration(options_.timeout_seconds));
  if (!token_.empty()) context.AddMetadata(std::string(wire::kSessionMetadataKey), token_);
}

Status Connection::failure(const grpc::Status& status, std::string_view context) const {
  return invalid_error(describe_rpc_failure(status, options_.socket, context));
}

}  // namespace accord::ctl
