// Shared fixture of the robustness suite: an accordd (accord::service::Daemon) started
// in this test process on sockets in a fresh temporary directory, reached only through
// the raw generated gRPC stub and raw session-channel sockets, so a test can send
// exactly the bytes a hostile or buggy client could. Every bad input is followed by
// require_serving(), which proves the daemon still does real work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include "accord/v1/accord.grpc.pb.h"
#include "client/api/unique_fd.h"
#include "client/tools/accordctl/rpc_errors.h"
#include "daemon/service/daemon.h"
#include "proto/wire/session_channel.h"

namespace robustness {

namespace v1 = accord::v1;
namespace wire = accord::wire;
using accord::UniqueFd;
using Stub = v1::Accord::Stub;

// Every call made by the suite has a deadline, so a hung daemon fails a test instead of
// hanging the executable.
inline constexpr int kCallDeadlineSeconds = 10;
// How long a raw session-channel read waits for the daemon's answer.
inline constexpr int kChannelTimeoutMs = 5000;

// The gRPC status code's name ("NOT_FOUND"), as accordctl prints it, for readable assertions.
inline std::string code_name(grpc::StatusCode code) { return accord::ctl::status_code_name(code); }

// One client session: the session channel it was opened on and the token gRPC calls
// carry. Closing `channel` ends the session.
struct Session {
  UniqueFd channel;
  std::string token;
  std::uint64_t id = 0;
};

// A client context with the deadline and, when `token` is given, the session metadata.
std::unique_ptr<grpc::ClientContext> make_context(const std::optional<std::string>& token);
inline std::unique_ptr<grpc::ClientContext> make_context(const Session& session) {
  return make_context(std::optional<std::string>(session.token));
}

// An accordd in this process. `tweak` adjusts the config before it starts (limits,
// kernel policy, ...). The destructor stops it and removes the socket directory.
class TestDaemon {
 public:
  explicit TestDaemon(const std::function<void(accord::service::DaemonConfig&)>& tweak = {});
  ~TestDaemon();
  TestDaemon(const TestDaemon&) = delete;
  TestDaemon& operator=(const TestDaemon&) = delete;

  const std::string& grpc_path() const { return grpc_path_; }
  const std::string& session_path() const { return session_path_; }
  accord::service::Daemon& daemon() { return *daemon_; }
  // The stub over the fixture's one gRPC channel.
  Stub& stub() { return *stub_; }
  // A stub over a channel of its own (a second client process).
  std::unique_ptr<Stub> new_stub() const;

  // Opens a session: connects to the session channel, sends Hello (`memory_budget`,
  // 0 for the daemon's) and reads Welcome. REQUIREs success.
  Session open_session(std::uint64_t memory_budget = 0) const;

 private:
  std::string dir_;
  std::string grpc_path_;
  std::string session_path_;
  std::unique_ptr<accord::service::Daemon> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Stub> stub_;
};

// --- raw control-plane calls: each returns the status and fills the out parameter ---

grpc::Status allocate(Stub& stub, const Session& s, std::uint64_t bytes, std::uint64_t* buffer);
grpc::Status free_buffer(Stub& stub, const Session& s, std::uint64_t buffer);
grpc::Status prepare(Stub& stub, const Session& s, const v1::PrepareGraphRequest& request, std::uint64_t* graph);
grpc::Status submit(Stub& stub, const Session& s, std::uint64_t graph, const std::vector<std::uint64_t>& after,
                    std::uint64_t* completion);
// Reads the one terminal event of a completion (state left UNSPECIFIED when none came).
grpc::Status wait_completion(Stub& stub, const Session& s, std::uint64_t completion, v1::CompletionEvent* event);
grpc::Status load_kernel(Stub& stub, const Session& s, const v1::LoadKernelRequest& request, std::uint64_t* kernel);

// Graph-building helpers.
void set_view(v1::BufferView* view, std::uint64_t buffer, std::uint64_t offset, std::uint64_t length);
v1::Node* add_fill(v1::PrepareGraphRequest& request, std::uint64_t buffer, std::uint64_t offset,
                   std::uint64_t length, std::uint32_t value);
// LoadKernel request for accord.add_f32 over `count` floats, exactly as its contract is.
v1::LoadKernelRequest add_f32_request(std::uint32_t count);
// LoadKernel request for the test plugin's test.sleep_us: one 4-byte read-write binding,
// held in device use for `microseconds` (ACCORD_TEST_PLUGIN_PATH must name the plugin).
v1::LoadKernelRequest sleep_request(std::uint32_t microseconds);

// The daemon still works end to end: on `session` (or a fresh one), allocates a buffer,
// fills it through a prepared graph, submits, waits for SUCCEEDED, maps the buffer over
// the session channel and reads the fill back, then releases everything.
void require_serving(TestDaemon& daemon, Stub& stub, const Session& session);
void require_serving(TestDaemon& daemon);

// --- raw session channel ---

// A raw SOCK_SEQPACKET connection to the session channel, reads timing out after
// kChannelTimeoutMs.
UniqueFd connect_session_channel(const TestDaemon& daemon);
// What a raw read of the session channel saw.
struct ChannelRead {
  enum class Kind { Message, Closed, Timeout, Error } kind = Kind::Error;
  std::optional<wire::ReceivedMessage> message;  // Kind::Message
  std::string error;                             // Kind::Error
};
ChannelRead read_channel(int socket);
// The daemon's Error answer on `socket`: REQUIREs an Error message and returns its text.
std::string read_error_message(int socket, std::uint32_t* kind = nullptr);
// Waits up to `ms` for the daemon to close `socket` (reads and discards messages).
bool wait_closed(int socket, int ms = kChannelTimeoutMs);
// Sends a Hello for label "robustness" (request id `id`), optionally with an fd.
void send_hello(int socket, std::uint32_t id, int fd = -1, std::uint64_t memory_budget = 0);

// Open descriptors of this process (the daemon runs in it), from /proc/self/fd.
std::size_t open_fd_count();
// Polls `predicate` every 10 ms for up to `ms`; true once it held.
bool eventually(const std::function<bool()>& predicate, int ms = 2000);

}  // namespace robustness

// Checks a gRPC status: the exact code, and that the message contains every fragment.
#define CHECK_STATUS(expr, expected_code, ...)                                                    \
  do {                                                                                            \
    const ::grpc::Status status_under_test = (expr);                                              \
    INFO("status " << ::robustness::code_name(status_under_test.error_code()) << ": '"            \
                   << status_under_test.error_message() << "'");                                  \
    CHECK(::robustness::code_name(status_under_test.error_code()) ==                              \
          ::robustness::code_name(expected_code));                                                \
    for (const std::string& fragment_under_test : std::initializer_list<std::string>{__VA_ARGS__}) \
      CHECK_THAT(status_under_test.error_message(), Catch::Matchers::Contains(fragment_under_test)); \
  } while (false)

#define REQUIRE_OK(expr)                                                                          \
  do {                                                                                            \
    const ::grpc::Status status_under_test = (expr);                                              \
    INFO("status " << ::robustness::code_name(status_under_test.error_code()) << ": '"            \
                   << status_under_test.error_message() << "'");                                  \
    REQUIRE(status_under_test.ok());                                                              \
  } while (false)
