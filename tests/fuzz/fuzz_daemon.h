// Shared harness of the libFuzzer targets: one accordd (accord::service::Daemon) started
// in this process for the whole run, reached through raw session-channel sockets, raw
// ring memory and the raw gRPC stub, so a target can write exactly the bytes a hostile
// client could. A check that fails prints why and aborts, which libFuzzer reports as a
// crash and saves the input for. Not Catch2: a fuzz target has no test runner.
// Thread-safety: none; libFuzzer calls a target from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "accord/v1/accord.grpc.pb.h"
#include "client/api/unique_fd.h"
#include "daemon/service/daemon.h"
#include "proto/wire/session_channel.h"
#include "proto/wire/submission_ring.h"

namespace accord::fuzz {

// Prints `what` and aborts when `condition` is false: the daemon broke a promise.
#define ACCORD_FUZZ_CHECK(condition, ...)                                         \
  do {                                                                            \
    if (!(condition)) ::accord::fuzz::fail(#condition, __FILE__, __LINE__, __VA_ARGS__); \
  } while (false)
[[noreturn]] void fail(const char* condition, const char* file, int line, const std::string& what);

// How long the daemon may take to answer anything before the harness calls it hung.
inline constexpr auto kAnswerTimeout = std::chrono::seconds(10);

// A client's session opened with Hello on a raw session channel. Closing `channel`
// ends it.
struct RawSession {
  UniqueFd channel;
  std::string token;
  std::uint64_t id = 0;
};

// A session's ring as its client sees it, with its own copies of the indices (so it
// keeps working the way a well-behaved client would, whatever else is written).
struct ClientRing {
  explicit ClientRing(wire::SubmissionRing mapped)
      : ring(std::move(mapped)), requests(ring.submissions()), answers(ring.completions()) {}
  wire::SubmissionRing ring;
  wire::RingProducer<wire::SubmitEntry> requests;
  wire::RingConsumer<wire::CompletionEntry> answers;
};

// The in-process accordd and the gRPC stub to it.
class FuzzDaemon {
 public:
  // Starts accordd on sockets in a fresh temporary directory (aborts when it cannot).
  FuzzDaemon();
  // Stops accordd, so LeakSanitizer at exit sees everything it should have freed.
  ~FuzzDaemon();
  FuzzDaemon(const FuzzDaemon&) = delete;
  FuzzDaemon& operator=(const FuzzDaemon&) = delete;

  // The one daemon of this process, started on first use and stopped at exit.
  static FuzzDaemon& instance();

  service::Daemon& daemon() { return *daemon_; }
  v1::Accord::Stub& stub() { return *stub_; }
  const std::string& session_path() const { return session_path_; }

  // A raw session-channel connection whose reads and writes time out.
  UniqueFd connect_channel() const;
  // Connects and says Hello; aborts unless Welcome comes back.
  RawSession open_session() const;
  // OpenRing on `session`'s channel, asking for the kRingFeature* bits of `features`,
  // and attaches to the memfd that comes back.
  std::unique_ptr<ClientRing> open_ring(const RawSession& session, std::uint64_t features = 0) const;
  // Over gRPC: a 4 KiB buffer and a prepared graph that fills it with `value`. Returns the
  // graph handle; `out_buffer` gets the buffer's.
  std::uint64_t prepare_fill_graph(const RawSession& session, std::uint32_t value,
                                   std::uint64_t* out_buffer = nullptr);

  // Waits until accordd has `count` sessions open (the others were closed). Aborts after
  // kAnswerTimeout.
  void await_sessions(std::size_t count) const;

 private:
  std::string dir_;
  std::string grpc_path_;
  std::string session_path_;
  std::unique_ptr<service::Daemon> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Accord::Stub> stub_;
};

// Takes the next answer from `ring`, waiting up to kAnswerTimeout; empty on timeout.
std::optional<wire::CompletionEntry> next_answer(ClientRing& ring);

// The witness: another session with its own ring and a prepared fill graph, which must
// still submit and complete after anything another client did. prove_alive() submits the
// graph on the ring, waits for its acceptance and its successful end, and releases the
// completion; it aborts naming what went wrong.
class Witness {
 public:
  explicit Witness(FuzzDaemon& daemon);
  void prove_alive();

 private:
  FuzzDaemon& daemon_;
  RawSession session_;
  std::unique_ptr<ClientRing> ring_;
  std::uint64_t graph_ = 0;
  std::uint64_t next_tag_ = 1;
};

// Open descriptors of this process (accordd runs in it), from /proc/self/fd.
std::size_t open_fd_count();

}  // namespace accord::fuzz
