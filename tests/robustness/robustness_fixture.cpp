#include "tests/robustness/robustness_fixture.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include "accord/builtin_kernels.h"

namespace robustness {

std::unique_ptr<grpc::ClientContext> make_context(const std::optional<std::string>& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(kCallDeadlineSeconds));
  if (token) context->AddMetadata(std::string(wire::kSessionMetadataKey), *token);
  return context;
}

// ------------------------------------------------------------------------ TestDaemon

TestDaemon::TestDaemon(const std::function<void(accord::service::DaemonConfig&)>& tweak) {
  // Hostile clients make the daemon log a warning per bad message: keep the output to errors.
  spdlog::set_level(spdlog::level::err);
  char pattern[] = "/tmp/accord-robustness-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  dir_ = pattern;
  grpc_path_ = dir_ + "/accord.sock";
  session_path_ = dir_ + "/session.sock";
  accord::service::DaemonConfig config;
  config.grpc_socket = grpc_path_;
  config.session_socket = session_path_;
  config.socket_mode = 0600;
  config.worker_threads = 2;
  config.session_limits.max_submissions = 64;
  config.session_limits.graph_slots = 8;
  if (tweak) tweak(config);
  auto started = accord::service::Daemon::start(config);
  INFO("accordd did not start: " << (started.ok() ? std::string() : started.status().to_string()));
  REQUIRE(started.ok());
  daemon_ = std::move(started).value();
  channel_ = grpc::CreateChannel("unix:" + grpc_path_, grpc::InsecureChannelCredentials());
  stub_ = v1::Accord::NewStub(channel_);
}

TestDaemon::~TestDaemon() {
  stub_.reset();
  channel_.reset();
  daemon_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::unique_ptr<Stub> TestDaemon::new_stub() const {
  // A channel argument unique to this stub keeps gRPC from sharing the subchannel (and
  // so the connection) with the fixture's channel.
  grpc::ChannelArguments arguments;
  static int counter = 0;
  arguments.SetInt("robustness.channel", ++counter);
  return v1::Accord::NewStub(
      grpc::CreateCustomChannel("unix:" + grpc_path_, grpc::InsecureChannelCredentials(), arguments));
}

Session TestDaemon::open_session(std::uint64_t memory_budget) const {
  Session session;
  session.channel = connect_session_channel(*this);
  send_hello(session.channel.get(), 1, -1, memory_budget);
  ChannelRead read = read_channel(session.channel.get());
  INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
  REQUIRE(read.kind == ChannelRead::Kind::Message);
  REQUIRE(read.message->type() == wire::MessageType::Welcome);
  REQUIRE(read.message->header.request_id == 1u);
  auto welcome = read.message->as<wire::WelcomePayload>();
  REQUIRE(welcome.ok());
  session.id = welcome->session_id;
  session.token = wire::get_text(welcome->token);
  REQUIRE(session.token.size() == wire::kTokenChars);
  return session;
}

// ------------------------------------------------------------------------ calls

grpc::Status allocate(Stub& stub, const Session& s, std::uint64_t bytes, std::uint64_t* buffer) {
  v1::AllocateRequest request;
  request.set_bytes(bytes);
  v1::AllocateResponse response;
  auto context = make_context(s);
  grpc::Status status = stub.Allocate(context.get(), request, &response);
  if (buffer != nullptr) *buffer = response.buffer();
  return status;
}

grpc::Status free_buffer(Stub& stub, const Session& s, std::uint64_t buffer) {
  v1::FreeRequest request;
  request.set_buffer(buffer);
  v1::FreeResponse response;
  auto context = make_context(s);
  return stub.Free(context.get(), request, &response);
}

grpc::Status prepare(Stub& stub, const Session& s, const v1::PrepareGraphRequest& request, std::uint64_t* graph) {
  v1::PrepareGraphResponse response;
  auto context = make_context(s);
  grpc::Status status = stub.PrepareGraph(context.get(), request, &response);
  if (graph != nullptr) *graph = response.graph();
  return status;
}

grpc::Status submit(Stub& stub, const Session& s, std::uint64_t graph, const std::vector<std::uint64_t>& after,
                    std::uint64_t* completion) {
  v1::SubmitRequest request;
  request.set_graph(graph);
  for (std::uint64_t a : after) request.add_after(a);
  v1::SubmitResponse response;
  auto context = make_context(s);
  grpc::Status status = stub.Submit(context.get(), request, &response);
  if (completion != nullptr) *completion = response.completion();
  return status;
}

grpc::Status wait_completion(Stub& stub, const Session& s, std::uint64_t completion, v1::CompletionEvent* event) {
  v1::WaitCompletionRequest request;
  request.set_completion(completion);
  auto context = make_context(s);
  auto reader = stub.WaitCompletion(context.get(), request);
  v1::CompletionEvent received;
  if (reader->Read(&received) && event != nullptr) *event = received;
  while (reader->Read(&received)) {
  }
  return reader->Finish();
}

grpc::Status load_kernel(Stub& stub, const Session& s, const v1::LoadKernelRequest& request, std::uint64_t* kernel) {
  v1::LoadKernelResponse response;
  auto context = make_context(s);
  grpc::Status status = stub.LoadKernel(context.get(), request, &response);
  if (kernel != nullptr) *kernel = response.kernel();
  return status;
}

void set_view(v1::BufferView* view, std::uint64_t buffer, std::uint64_t offset, std::uint64_t length) {
  view->set_buffer(buffer);
  view->set_offset(offset);
  view->set_length(length);
}

v1::Node* add_fill(v1::PrepareGraphRequest& request, std::uint64_t buffer, std::uint64_t offset,
                   std::uint64_t length, std::uint32_t value) {
  v1::Node* node = request.add_nodes();
  set_view(node->mutable_fill()->mutable_destination(), buffer, offset, length);
  node->mutable_fill()->set_value(value);
  return node;
}

v1::LoadKernelRequest sleep_request(std::uint32_t microseconds) {
  v1::LoadKernelRequest r;
  r.set_name("test.sleep_us");
  r.set_plugin_path(ACCORD_TEST_PLUGIN_PATH);
  v1::BindingContract* b = r.mutable_contract()->add_bindings();
  b->set_bytes(4);
  b->set_alignment(4);
  b->set_access(v1::ACCESS_READ_WRITE);
  std::string constants(sizeof microseconds, '\0');
  std::memcpy(constants.data(), &microseconds, sizeof microseconds);
  r.mutable_contract()->set_constants(constants);
  return r;
}

v1::LoadKernelRequest add_f32_request(std::uint32_t count) {
  const accord::builtin::KernelSpec spec = accord::builtin::add_f32(count);
  v1::LoadKernelRequest request;
  request.set_name(spec.name);
  for (const accord::BindingContract& b : spec.contract.bindings) {
    v1::BindingContract* out = request.mutable_contract()->add_bindings();
    out->set_bytes(b.bytes);
    out->set_alignment(b.alignment);
    out->set_access(b.access == accord::Access::Read    ? v1::ACCESS_READ
                    : b.access == accord::Access::Write ? v1::ACCESS_WRITE
                                                        : v1::ACCESS_READ_WRITE);
    out->set_layout(b.layout);
  }
  request.mutable_contract()->set_constants(
      std::string(reinterpret_cast<const char*>(spec.contract.constants.data()), spec.contract.constants.size()));
  return request;
}

void require_serving(TestDaemon& daemon, Stub& stub, const Session& session) {
  INFO("follow-up: the daemon must still serve a small fill graph end to end");
  constexpr std::uint64_t kBytes = 4096 + 100;  // more than a page: the mapping is page-rounded
  constexpr std::uint8_t kValue = 0x5a;
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, session, kBytes, &buffer));
  v1::PrepareGraphRequest graph_request;
  add_fill(graph_request, buffer, 0, kBytes, kValue);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, session, graph_request, &graph));
  std::uint64_t completion = 0;
  REQUIRE_OK(submit(stub, session, graph, {}, &completion));
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, session, completion, &event));
  INFO("completion error: " << event.error());
  REQUIRE(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  REQUIRE(event.completion() == completion);

  // Read the result through the buffer's memfd, as a client maps it.
  constexpr std::uint32_t kMapRequest = 0x7777;
  wire::MapBufferPayload map;
  map.buffer = buffer;
  REQUIRE(wire::send_payload(session.channel.get(), wire::MessageType::MapBuffer, kMapRequest, map).ok());
  ChannelRead read = read_channel(session.channel.get());
  INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
  REQUIRE(read.kind == ChannelRead::Kind::Message);
  REQUIRE(read.message->type() == wire::MessageType::BufferFd);
  REQUIRE(read.message->header.request_id == kMapRequest);
  auto reply = read.message->as<wire::BufferFdPayload>();
  REQUIRE(reply.ok());
  REQUIRE(reply->buffer == buffer);
  REQUIRE(reply->bytes == kBytes);
  REQUIRE(read.message->fd.valid());
  void* mapped = mmap(nullptr, reply->map_bytes, PROT_READ, MAP_SHARED, read.message->fd.get(), 0);
  REQUIRE(mapped != MAP_FAILED);
  const auto* bytes = static_cast<const std::uint8_t*>(mapped);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < kBytes; ++i) mismatches += bytes[i] != kValue ? 1 : 0;
  munmap(mapped, reply->map_bytes);
  REQUIRE(mismatches == 0);

  v1::ReleaseCompletionRequest release_completion;
  release_completion.set_completion(completion);
  v1::ReleaseCompletionResponse release_completion_response;
  REQUIRE_OK(stub.ReleaseCompletion(make_context(session).get(), release_completion, &release_completion_response));
  v1::ReleaseGraphRequest release_graph;
  release_graph.set_graph(graph);
  v1::ReleaseGraphResponse release_graph_response;
  REQUIRE_OK(stub.ReleaseGraph(make_context(session).get(), release_graph, &release_graph_response));
  REQUIRE_OK(free_buffer(stub, session, buffer));
  REQUIRE(daemon.daemon().session_count() >= 1);
}

void require_serving(TestDaemon& daemon) {
  const Session session = daemon.open_session();
  require_serving(daemon, daemon.stub(), session);
}

// ------------------------------------------------------------------------ raw channel

UniqueFd connect_session_channel(const TestDaemon& daemon) {
  auto connected = wire::connect_unix(daemon.session_path(), SOCK_SEQPACKET);
  INFO("connect: " << (connected.ok() ? std::string() : connected.status().to_string()));
  REQUIRE(connected.ok());
  UniqueFd socket = std::move(connected).value();
  timeval timeout{};
  timeout.tv_sec = kChannelTimeoutMs / 1000;
  timeout.tv_usec = (kChannelTimeoutMs % 1000) * 1000;
  REQUIRE(setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0);
  REQUIRE(setsockopt(socket.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0);
  return socket;
}

ChannelRead read_channel(int socket) {
  ChannelRead out;
  auto received = wire::receive_message(socket);
  if (!received.ok()) {
    // A blocking socket with SO_RCVTIMEO reports the timeout as EAGAIN: "no message waiting".
    const std::string message(received.status().message());
    if (received.status().kind() == accord::ErrorKind::Busy) {
      out.kind = ChannelRead::Kind::Timeout;
    } else if (message.find("session channel closed") != std::string::npos) {
      out.kind = ChannelRead::Kind::Closed;  // ECONNRESET
    } else {
      out.kind = ChannelRead::Kind::Error;
    }
    out.error = message;
    return out;
  }
  if (!received.value()) {
    out.kind = ChannelRead::Kind::Closed;
    return out;
  }
  out.kind = ChannelRead::Kind::Message;
  out.message.emplace(std::move(*received.value()));
  return out;
}

std::string read_error_message(int socket, std::uint32_t* kind) {
  ChannelRead read = read_channel(socket);
  INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
  REQUIRE(read.kind == ChannelRead::Kind::Message);
  REQUIRE(read.message->type() == wire::MessageType::Error);
  REQUIRE_FALSE(read.message->fd.valid());
  auto error = read.message->as<wire::ErrorPayload>();
  REQUIRE(error.ok());
  if (kind != nullptr) *kind = error->kind;
  return wire::get_text(error->message);
}

bool wait_closed(int socket, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    ChannelRead read = read_channel(socket);
    if (read.kind == ChannelRead::Kind::Closed) return true;
    if (read.kind == ChannelRead::Kind::Error) return false;
  }
  return false;
}

void send_hello(int socket, std::uint32_t id, int fd, std::uint64_t memory_budget) {
  wire::HelloPayload hello;
  wire::set_text(hello.label, "robustness");
  hello.memory_budget = memory_budget;
  const accord::Status sent = wire::send_payload(socket, wire::MessageType::Hello, id, hello, fd);
  INFO("Hello: " << sent.to_string());
  REQUIRE(sent.ok());
}

std::size_t open_fd_count() {
  std::size_t count = 0;
  DIR* dir = opendir("/proc/self/fd");
  REQUIRE(dir != nullptr);
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  closedir(dir);
  return count;
}

bool eventually(const std::function<bool()>& predicate, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace robustness
