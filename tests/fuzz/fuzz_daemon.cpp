// The fuzz harness's accordd and its well-behaved clients. Everything here is the
// polite side: it speaks the protocol as the client library does, so that a failure it
// reports is the daemon's, never the harness's.
#include "tests/fuzz/fuzz_daemon.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

namespace accord::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<grpc::ClientContext> context_for(const RawSession& session) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + kAnswerTimeout);
  context->AddMetadata(std::string(wire::kSessionMetadataKey), session.token);
  return context;
}

wire::ReceivedMessage read_message(int socket, const char* what) {
  auto received = wire::receive_message(socket);
  ACCORD_FUZZ_CHECK(received.ok(), std::string(what) + ": " + received.status().to_string());
  ACCORD_FUZZ_CHECK(received.value().has_value(), std::string(what) + ": accordd closed the session channel");
  return std::move(*received.value());
}

}  // namespace

void fail(const char* condition, const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "\n==== accord fuzz check failed at %s:%d: %s\n==== %s\n", file, line, condition, what.c_str());
  std::fflush(stderr);
  std::abort();
}

FuzzDaemon::FuzzDaemon() {
  // Every hostile input makes accordd log a warning; keep the fuzzer's output readable.
  spdlog::set_level(spdlog::level::critical);
  char pattern[] = "/tmp/accord-fuzz-XXXXXX";
  ACCORD_FUZZ_CHECK(mkdtemp(pattern) != nullptr, "mkdtemp failed");
  dir_ = pattern;
  grpc_path_ = dir_ + "/accord.sock";
  session_path_ = dir_ + "/session.sock";
  service::DaemonConfig config;
  config.grpc_socket = grpc_path_;
  config.session_socket = session_path_;
  config.socket_mode = 0600;
  config.worker_threads = 2;
  config.session_limits.max_submissions = 16;  // small: the fuzzer reaches "all tickets taken" quickly
  config.session_limits.graph_slots = 4;
  auto started = service::Daemon::start(config);
  ACCORD_FUZZ_CHECK(started.ok(), "accordd did not start: " + (started.ok() ? std::string() : started.status().to_string()));
  daemon_ = std::move(started).value();
  channel_ = grpc::CreateChannel("unix:" + grpc_path_, grpc::InsecureChannelCredentials());
  stub_ = v1::Accord::NewStub(channel_);
}

FuzzDaemon::~FuzzDaemon() {
  stub_.reset();
  channel_.reset();
  daemon_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

FuzzDaemon& FuzzDaemon::instance() {
  // Stopped by a static destructor, which runs before LeakSanitizer's check at exit
  // (registered earlier, so it runs later): what accordd failed to free is reported.
  static FuzzDaemon daemon;
  return daemon;
}

UniqueFd FuzzDaemon::connect_channel() const {
  auto connected = wire::connect_unix(session_path_, SOCK_SEQPACKET);
  ACCORD_FUZZ_CHECK(connected.ok(), "connect: " + (connected.ok() ? std::string() : connected.status().to_string()));
  UniqueFd socket = std::move(connected).value();
  timeval timeout{};
  timeout.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(kAnswerTimeout).count();
  ACCORD_FUZZ_CHECK(setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0, "SO_RCVTIMEO");
  ACCORD_FUZZ_CHECK(setsockopt(socket.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) == 0, "SO_SNDTIMEO");
  return socket;
}

RawSession FuzzDaemon::open_session() const {
  RawSession session;
  session.channel = connect_channel();
  wire::HelloPayload hello;
  wire::set_text(hello.label, "fuzz");
  const Status sent = wire::send_payload(session.channel.get(), wire::MessageType::Hello, 1, hello);
  ACCORD_FUZZ_CHECK(sent.ok(), "Hello: " + sent.to_string());
  const wire::ReceivedMessage message = read_message(session.channel.get(), "Welcome");
  ACCORD_FUZZ_CHECK(message.type() == wire::MessageType::Welcome,
                    "Hello answered with message type " + std::to_string(message.header.type));
  auto welcome = message.as<wire::WelcomePayload>();
  ACCORD_FUZZ_CHECK(welcome.ok(), "Welcome: " + welcome.status().to_string());
  session.id = welcome->session_id;
  session.token = wire::get_text(welcome->token);
  return session;
}

std::unique_ptr<ClientRing> FuzzDaemon::open_ring(const RawSession& session, std::uint64_t features) const {
  const Status sent =
      wire::send_payload(session.channel.get(), wire::MessageType::OpenRing, 2, wire::OpenRingPayload{features});
  ACCORD_FUZZ_CHECK(sent.ok(), "OpenRing: " + sent.to_string());
  wire::ReceivedMessage message = read_message(session.channel.get(), "RingFd");
  ACCORD_FUZZ_CHECK(message.type() == wire::MessageType::RingFd && message.fd.valid(),
                    "OpenRing answered with message type " + std::to_string(message.header.type));
  auto ring = wire::SubmissionRing::attach(std::move(message.fd));
  ACCORD_FUZZ_CHECK(ring.ok(), "attaching the ring: " + ring.status().to_string());
  return std::make_unique<ClientRing>(std::move(ring).value());
}

std::uint64_t FuzzDaemon::prepare_fill_graph(const RawSession& session, std::uint32_t value,
                                             std::uint64_t* out_buffer) {
  constexpr std::uint64_t kBytes = 4096;
  v1::AllocateRequest allocate;
  allocate.set_bytes(kBytes);
  v1::AllocateResponse allocated;
  grpc::Status status = stub_->Allocate(context_for(session).get(), allocate, &allocated);
  ACCORD_FUZZ_CHECK(status.ok(), "Allocate: " + status.error_message());
  v1::PrepareGraphRequest prepare;
  v1::Node* node = prepare.add_nodes();
  v1::BufferView* view = node->mutable_fill()->mutable_destination();
  view->set_buffer(allocated.buffer());
  view->set_offset(0);
  view->set_length(kBytes);
  node->mutable_fill()->set_value(value);
  v1::PrepareGraphResponse prepared;
  status = stub_->PrepareGraph(context_for(session).get(), prepare, &prepared);
  ACCORD_FUZZ_CHECK(status.ok(), "PrepareGraph: " + status.error_message());
  if (out_buffer != nullptr) *out_buffer = allocated.buffer();
  return prepared.graph();
}

void FuzzDaemon::await_sessions(std::size_t count) const {
  const auto until = Clock::now() + kAnswerTimeout;
  while (daemon_->session_count() != count) {
    ACCORD_FUZZ_CHECK(Clock::now() < until, "accordd still has " + std::to_string(daemon_->session_count()) +
                                                " sessions open, expected " + std::to_string(count));
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::optional<wire::CompletionEntry> next_answer(ClientRing& ring) {
  const auto until = Clock::now() + kAnswerTimeout;
  for (;;) {
    wire::CompletionEntry answer;
    const wire::PopResult popped = ring.answers.try_pop(answer);
    ACCORD_FUZZ_CHECK(popped != wire::PopResult::Corrupt, "accordd published an impossible completion index");
    if (popped == wire::PopResult::Ok) return answer;
    const auto left = until - Clock::now();
    if (left <= Clock::duration::zero()) return std::nullopt;
    ring.answers.wait(std::chrono::microseconds(20), std::chrono::duration_cast<std::chrono::nanoseconds>(left));
  }
}

Witness::Witness(FuzzDaemon& daemon) : daemon_(daemon), session_(daemon.open_session()) {
  ring_ = daemon_.open_ring(session_);
  graph_ = daemon_.prepare_fill_graph(session_, 0x5a);
}

void Witness::prove_alive() {
  wire::SubmitEntry submit;
  submit.opcode = static_cast<std::uint32_t>(wire::RingOp::Submit);
  submit.tag = next_tag_++;
  submit.handle = graph_;
  ACCORD_FUZZ_CHECK(ring_->requests.try_push(submit), "the witness's submission queue is full");
  const auto accepted = next_answer(*ring_);
  ACCORD_FUZZ_CHECK(accepted.has_value(), "the witness's submission was never answered");
  ACCORD_FUZZ_CHECK(accepted->tag == submit.tag && accepted->terminal == 0 && accepted->status == 0,
                    "the witness's submission was answered with tag " + std::to_string(accepted->tag) + " status " +
                        std::to_string(accepted->status) + " terminal " + std::to_string(accepted->terminal));
  const auto done = next_answer(*ring_);
  ACCORD_FUZZ_CHECK(done.has_value(), "the witness's submission never finished");
  ACCORD_FUZZ_CHECK(done->tag == submit.tag && done->terminal == 1 && done->status == 0,
                    "the witness's submission ended with tag " + std::to_string(done->tag) + " status " +
                        std::to_string(done->status) + " terminal " + std::to_string(done->terminal));
  wire::SubmitEntry release;
  release.opcode = static_cast<std::uint32_t>(wire::RingOp::ReleaseCompletion);
  release.tag = next_tag_++;
  release.handle = accepted->handle;
  ACCORD_FUZZ_CHECK(ring_->requests.try_push(release), "the witness's submission queue is full");
  const auto released = next_answer(*ring_);
  ACCORD_FUZZ_CHECK(released.has_value() && released->tag == release.tag && released->status == 0,
                    "the witness's completion could not be released");
}

std::size_t open_fd_count() {
  std::size_t count = 0;
  DIR* dir = opendir("/proc/self/fd");
  ACCORD_FUZZ_CHECK(dir != nullptr, "opendir /proc/self/fd");
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  closedir(dir);
  return count;
}

}  // namespace accord::fuzz
