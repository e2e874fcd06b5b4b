// Clients that walk away mid-flight: waits abandoned by a deadline or a cancelled call,
// completions cancelled or released while running, and a session closed under a
// pending wait. The work itself must finish correctly and the daemon keep serving.
#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <thread>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

constexpr std::uint64_t kBigBytes = 64 << 20;  // a fill that takes a few milliseconds

grpc::Status wait_with_deadline(Stub& stub, const Session& s, std::uint64_t completion,
                                std::chrono::microseconds deadline, v1::CompletionEvent* event) {
  v1::WaitCompletionRequest request;
  request.set_completion(completion);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  context.AddMetadata(std::string(wire::kSessionMetadataKey), s.token);
  auto reader = stub.WaitCompletion(&context, request);
  v1::CompletionEvent received;
  if (reader->Read(&received) && event != nullptr) *event = received;
  while (reader->Read(&received)) {
  }
  return reader->Finish();
}

grpc::Status wait_cancelled_after(Stub& stub, const Session& s, std::uint64_t completion,
                                  std::chrono::microseconds delay) {
  v1::WaitCompletionRequest request;
  request.set_completion(completion);
  auto context = make_context(s);
  auto reader = stub.WaitCompletion(context.get(), request);
  std::thread canceller([&] {
    std::this_thread::sleep_for(delay);
    context->TryCancel();
  });
  v1::CompletionEvent received;
  while (reader->Read(&received)) {
  }
  const grpc::Status status = reader->Finish();
  canceller.join();
  return status;
}

void release_completion(Stub& stub, const Session& s, std::uint64_t completion) {
  v1::ReleaseCompletionRequest request;
  request.set_completion(completion);
  v1::ReleaseCompletionResponse response;
  REQUIRE_OK(stub.ReleaseCompletion(make_context(s).get(), request, &response));
}

}  // namespace

TEST_CASE("abandoned waits, cancels and releases mid-flight leave the work and daemon intact",
          "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  std::uint64_t big = 0;
  REQUIRE_OK(allocate(stub, s, kBigBytes, &big));
  v1::PrepareGraphRequest request;
  add_fill(request, big, 0, kBigBytes, 0x33);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));

  for (int i = 0; i < 32; ++i) {
    INFO("round " << i);
    std::uint64_t completion = 0;
    REQUIRE_OK(submit(stub, s, graph, {}, &completion));
    const auto delay = std::chrono::microseconds(100 * (i % 8));
    v1::CompletionEvent event;
    switch (i % 4) {
      case 0: {
        // A timed wait that may expire first: it never cancels the submission.
        const grpc::Status timed = wait_with_deadline(stub, s, completion, delay + std::chrono::microseconds(1), nullptr);
        CHECK((timed.ok() || timed.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED));
        REQUIRE_OK(wait_completion(stub, s, completion, &event));
        CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
        release_completion(stub, s, completion);
        break;
      }
      case 1: {
        // The client cancels its own wait call.
        const grpc::Status cancelled = wait_cancelled_after(stub, s, completion, delay);
        CHECK((cancelled.ok() || cancelled.error_code() == grpc::StatusCode::CANCELLED));
        REQUIRE_OK(wait_completion(stub, s, completion, &event));
        CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
        release_completion(stub, s, completion);
        break;
      }
      case 2: {
        // Cancel the submission itself, with a wait racing it.
        auto waiter = std::async(std::launch::async, [&] {
          v1::CompletionEvent raced;
          const grpc::Status status = wait_completion(stub, s, completion, &raced);
          return std::make_pair(status, raced);
        });
        std::this_thread::sleep_for(delay);
        v1::CancelRequest cancel;
        cancel.set_completion(completion);
        v1::CancelResponse cancelled;
        REQUIRE_OK(stub.Cancel(make_context(s).get(), cancel, &cancelled));
        const auto [status, raced] = waiter.get();
        REQUIRE(status.ok());
        CHECK((raced.state() == v1::COMPLETION_STATE_SUCCEEDED || raced.state() == v1::COMPLETION_STATE_CANCELLED));
        release_completion(stub, s, completion);
        break;
      }
      default:
        // Drop the handle while the run is in flight, never waiting for it.
        release_completion(stub, s, completion);
        CHECK_STATUS(wait_completion(stub, s, completion, nullptr), grpc::StatusCode::NOT_FOUND,
                     "completion handle " + std::to_string(completion));
        break;
    }
  }

  // A session closed under a pending wait: the wait ends (however it ends), nothing crashes.
  {
    Session doomed = d.open_session();
    std::uint64_t buffer = 0;
    REQUIRE_OK(allocate(stub, doomed, kBigBytes, &buffer));
    v1::PrepareGraphRequest doomed_request;
    for (std::uint32_t value = 0x44; value < 0x48; ++value) add_fill(doomed_request, buffer, 0, kBigBytes, value);
    std::uint64_t doomed_graph = 0;
    REQUIRE_OK(prepare(stub, doomed, doomed_request, &doomed_graph));
    std::uint64_t completion = 0;
    REQUIRE_OK(submit(stub, doomed, doomed_graph, {}, &completion));
    auto waiter = std::async(std::launch::async, [&] { return wait_completion(stub, doomed, completion, nullptr); });
    // Usually the wait is registered by now and the work still running (either way the
    // wait must end, and nothing may crash).
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    doomed.channel.reset();
    const grpc::Status ended = waiter.get();
    INFO("wait under a closing session: " << code_name(ended.error_code()) << " '" << ended.error_message() << "'");
    CHECK(ended.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  CHECK(eventually([&] { return d.daemon().session_count() == 1; }));
  require_serving(d, stub, s);
  // Let the orphaned runs (released handles, the closed session's graph) finish before
  // the fixture stops the daemon: stopping under load is its own test below.
  CHECK(eventually(
      [&] {
        v1::GetStatisticsRequest stats_request;
        v1::GetStatisticsResponse stats;
        if (!stub.GetStatistics(make_context(s).get(), stats_request, &stats).ok()) return false;
        return stats.daemon().submissions() == stats.daemon().completions();
      },
      10000));
}

TEST_CASE("stopping the daemon with work in flight drains it without crashing", "[daemon][robustness]") {
  for (int attempt = 0; attempt < 3; ++attempt) {
    INFO("attempt " << attempt);
    std::uint64_t submitted = 0;
    {
      TestDaemon d;
      Stub& stub = d.stub();
      const Session s = d.open_session();
      std::uint64_t buffer = 0;
      REQUIRE_OK(allocate(stub, s, kBigBytes, &buffer));
      v1::PrepareGraphRequest request;  // four dependent fills: tens of milliseconds of work
      for (std::uint32_t value = 1; value <= 4; ++value) add_fill(request, buffer, 0, kBigBytes, value);
      std::uint64_t graph = 0;
      REQUIRE_OK(prepare(stub, s, request, &graph));
      for (int i = 0; i < 2; ++i) {
        std::uint64_t completion = 0;
        REQUIRE_OK(submit(stub, s, graph, {}, &completion));
        ++submitted;
      }
      // The fixture's destructor stops the daemon now, with the runs still going: the
      // engine must drain them (Daemon::~Impl: "let in-flight work drain").
    }
    CHECK(submitted == 2);
  }
}

}  // namespace robustness
