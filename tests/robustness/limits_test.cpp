// Requests past the daemon's limits: message size, allocation size, live handles per
// session, the memory budget, and trace capacity. Each is refused with the right code
// and the daemon (and the refused session) keep working.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

constexpr std::size_t kMaxMessageBytes = 64 << 10;
constexpr std::size_t kMaxObjects = 8;
constexpr std::uint64_t kDaemonBudget = 64 << 20;

void limited(accord::service::DaemonConfig& config) {
  config.max_message_bytes = kMaxMessageBytes;
  config.max_objects_per_session = kMaxObjects;
  config.session_limits.memory_budget = kDaemonBudget;
}

v1::Statistics session_statistics(Stub& stub, const Session& s) {
  v1::GetStatisticsRequest request;
  v1::GetStatisticsResponse response;
  const grpc::Status status = stub.GetStatistics(make_context(s).get(), request, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return response.session();
}

v1::SessionLimits session_limits(Stub& stub, const Session& s) {
  v1::GetSessionInfoRequest request;
  v1::SessionInfo info;
  const grpc::Status status = stub.GetSessionInfo(make_context(s).get(), request, &info);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return info.limits();
}

// A graph of fills on `buffer` whose encoding is about `bytes` long (within one node).
v1::PrepareGraphRequest graph_of_size(std::uint64_t buffer, std::size_t bytes) {
  v1::PrepareGraphRequest one;
  add_fill(one, buffer, 0, 4096, 1);
  const std::size_t per_node = one.ByteSizeLong();
  v1::PrepareGraphRequest request;
  for (std::size_t i = 0; i <= bytes / per_node; ++i) add_fill(request, buffer, 0, 4096, 1);
  return request;
}

}  // namespace

TEST_CASE("a request larger than max_message_bytes is RESOURCE_EXHAUSTED", "[daemon][robustness]") {
  TestDaemon d(limited);
  Stub& stub = d.stub();
  const Session s = d.open_session();
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 4096, &buffer));

  // Just under the limit: accepted.
  {
    v1::PrepareGraphRequest request = graph_of_size(buffer, kMaxMessageBytes - 1024);
    REQUIRE(request.ByteSizeLong() < kMaxMessageBytes);
    std::uint64_t graph = 0;
    REQUIRE_OK(prepare(stub, s, request, &graph));
    v1::ReleaseGraphRequest release;
    release.set_graph(graph);
    v1::ReleaseGraphResponse released;
    REQUIRE_OK(stub.ReleaseGraph(make_context(s).get(), release, &released));
  }
  // Over it, by a little and by a lot.
  for (const std::size_t target : {kMaxMessageBytes + 64, std::size_t{4} << 20}) {
    v1::PrepareGraphRequest request = graph_of_size(buffer, target);
    REQUIRE(request.ByteSizeLong() > target);
    const std::size_t size = request.ByteSizeLong();
    INFO("request of " << size << " bytes");
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED,
                 std::to_string(kMaxMessageBytes));
    // The connection that carried it still works.
    require_serving(d, stub, s);
  }
  // A huge kernel contract (constants) is the same.
  {
    v1::LoadKernelRequest request = add_f32_request(16);
    request.mutable_contract()->set_constants(std::string(kMaxMessageBytes * 2, 'x'));
    CHECK_STATUS(load_kernel(stub, s, request, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED,
                 std::to_string(kMaxMessageBytes));
  }
  require_serving(d, stub, s);
}

TEST_CASE("impossible allocations are refused and leave nothing behind", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();

  {
    const std::uint64_t huge = std::uint64_t{1} << 62;
    std::uint64_t buffer = 0;
    const grpc::Status status = allocate(stub, s, huge, &buffer);
    INFO("status " << code_name(status.error_code()) << ": '" << status.error_message() << "'");
    CHECK((status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
           status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED));
    CHECK_THAT(status.error_message(), Catch::Matchers::Contains(std::to_string(huge)));
  }
  CHECK_STATUS(allocate(stub, s, std::numeric_limits<std::uint64_t>::max(), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, std::to_string(std::numeric_limits<std::uint64_t>::max()),
               "PTRDIFF_MAX");
  CHECK_STATUS(allocate(stub, s, (std::uint64_t{1} << 63) - 1, nullptr), grpc::StatusCode::INVALID_ARGUMENT,
               "larger than any mapping");
  CHECK_STATUS(allocate(stub, s, 0, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "0 bytes");
  {
    v1::AllocateRequest request;
    request.set_bytes(64);
    request.mutable_placement()->set_kind(static_cast<v1::PlacementKind>(99));
    v1::AllocateResponse response;
    CHECK_STATUS(stub.Allocate(make_context(s).get(), request, &response), grpc::StatusCode::INVALID_ARGUMENT,
                 "placement kind 99");
    request.mutable_placement()->set_kind(v1::PLACEMENT_KIND_GPU_LOCAL);
    request.mutable_placement()->set_device(3);
    CHECK_STATUS(stub.Allocate(make_context(s).get(), request, &response), grpc::StatusCode::UNIMPLEMENTED,
                 "no device");
  }
  // None of the refusals left a handle or live bytes behind.
  const v1::Statistics stats = session_statistics(stub, s);
  CHECK(stats.live_bytes() == 0);
  CHECK(stats.allocations() == 0);
  {
    v1::ListSessionsRequest request;
    v1::ListSessionsResponse sessions;
    REQUIRE_OK(stub.ListSessions(make_context(s).get(), request, &sessions));
    REQUIRE(sessions.sessions_size() == 1);
    CHECK(sessions.sessions(0).buffers() == 0);
  }
  // Trace capacity bounds.
  {
    v1::StartTraceRequest request;
    v1::StartTraceResponse response;
    request.set_event_capacity(0);
    CHECK_STATUS(stub.StartTrace(make_context(s).get(), request, &response), grpc::StatusCode::INVALID_ARGUMENT,
                 "capacity");
    request.set_event_capacity(std::numeric_limits<std::uint64_t>::max());
    CHECK_STATUS(stub.StartTrace(make_context(s).get(), request, &response), grpc::StatusCode::INVALID_ARGUMENT,
                 "capacity");
  }
  require_serving(d, stub, s);
}

TEST_CASE("max_objects: the handle past the limit is RESOURCE_EXHAUSTED until one is freed",
          "[daemon][robustness]") {
  TestDaemon d(limited);
  Stub& stub = d.stub();
  const Session s = d.open_session();
  REQUIRE(session_limits(stub, s).max_objects() == kMaxObjects);

  std::vector<std::uint64_t> buffers;
  for (std::size_t i = 0; i < kMaxObjects; ++i) {
    std::uint64_t buffer = 0;
    REQUIRE_OK(allocate(stub, s, 1024, &buffer));
    buffers.push_back(buffer);
  }
  // Every kind of new handle is refused while the session is full.
  for (int attempt = 0; attempt < 20; ++attempt)
    CHECK_STATUS(allocate(stub, s, 1024, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_objects");
  CHECK_STATUS(load_kernel(stub, s, add_f32_request(16), nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED,
               "max_objects");
  v1::PrepareGraphRequest request;
  add_fill(request, buffers[0], 0, 1024, 1);
  CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_objects");
  // The refused allocations were released: only the 8 live buffers count.
  CHECK(session_statistics(stub, s).live_bytes() == kMaxObjects * 1024);

  // Another session is not affected by this one being full.
  {
    const Session other = d.open_session();
    std::uint64_t buffer = 0;
    REQUIRE_OK(allocate(stub, other, 1024, &buffer));
  }

  // Freeing one makes room for exactly one.
  REQUIRE_OK(free_buffer(stub, s, buffers.back()));
  buffers.pop_back();
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  CHECK_STATUS(allocate(stub, s, 1024, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_objects");
  // A submit needs a completion handle: refused while full. (Fewer refusals than the
  // graph's 8 slots, so that a daemon which wrongly runs refused submissions still
  // reports max_objects rather than a full graph.)
  const std::uint64_t submissions_before = session_statistics(stub, s).submissions();
  for (int attempt = 0; attempt < 5; ++attempt)
    CHECK_STATUS(submit(stub, s, graph, {}, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_objects");
  // A refused submit changed nothing (Busy: "retry later, nothing changed"): no run of
  // the graph was accepted behind the client's back.
  CHECK(session_statistics(stub, s).submissions() == submissions_before);
  REQUIRE_OK(free_buffer(stub, s, buffers.back()));
  buffers.pop_back();
  std::uint64_t completion = 0;
  REQUIRE_OK(submit(stub, s, graph, {}, &completion));
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, completion, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);

  // Room for the follow-up's buffer, graph and completion.
  for (int i = 0; i < 3; ++i) {
    REQUIRE_OK(free_buffer(stub, s, buffers.back()));
    buffers.pop_back();
  }
  require_serving(d, stub, s);
}

TEST_CASE("memory budget: allocations past it are RESOURCE_EXHAUSTED", "[daemon][robustness]") {
  TestDaemon d(limited);
  Stub& stub = d.stub();

  // A client can ask for less than the daemon's budget, never more.
  {
    const Session greedy = d.open_session(kDaemonBudget * 2);
    CHECK(session_limits(stub, greedy).memory_budget() == kDaemonBudget);
  }
  constexpr std::uint64_t kBudget = 1 << 20;
  const Session s = d.open_session(kBudget);
  REQUIRE(session_limits(stub, s).memory_budget() == kBudget);

  std::uint64_t big = 0, rest = 0;
  REQUIRE_OK(allocate(stub, s, kBudget * 3 / 4, &big));
  CHECK_STATUS(allocate(stub, s, kBudget / 2, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "memory budget",
               std::to_string(kBudget));
  CHECK_STATUS(allocate(stub, s, kBudget + 1, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "memory budget");
  // Exactly the remainder fits; then nothing does.
  REQUIRE_OK(allocate(stub, s, kBudget / 4, &rest));
  CHECK_STATUS(allocate(stub, s, 1, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "memory budget");
  // Freeing returns the bytes.
  REQUIRE_OK(free_buffer(stub, s, big));
  REQUIRE_OK(allocate(stub, s, kBudget / 2, &big));
  REQUIRE_OK(free_buffer(stub, s, big));
  REQUIRE_OK(free_buffer(stub, s, rest));

  // Allocations refused for max_objects give their bytes back to the budget.
  {
    const Session t = d.open_session(16 << 10);
    std::vector<std::uint64_t> buffers;
    for (std::size_t i = 0; i < kMaxObjects; ++i) {
      std::uint64_t buffer = 0;
      REQUIRE_OK(allocate(stub, t, 1024, &buffer));
      buffers.push_back(buffer);
    }
    for (int attempt = 0; attempt < 20; ++attempt)
      CHECK_STATUS(allocate(stub, t, 1024, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_objects");
    REQUIRE_OK(free_buffer(stub, t, buffers.back()));
    // 7 KiB live: exactly 9 KiB more fits a 16 KiB budget, unless refusals leaked bytes.
    REQUIRE_OK(allocate(stub, t, 9 << 10, nullptr));
  }
  require_serving(d, stub, s);
}

}  // namespace robustness

namespace robustness {
namespace {

TEST_CASE("ring pollers: automatic is half the CPUs within 2..16, and one per 127 sessions at least",
          "[daemon][robustness]") {
  using accord::service::ring_pollers_for;
  CHECK(ring_pollers_for(0, 256, 2) == 3);  // 256 sessions need 3 threads of 127 rings
  CHECK(ring_pollers_for(0, 16, 2) == 2);
  CHECK(ring_pollers_for(0, 16, 16) == 8);
  CHECK(ring_pollers_for(0, 16, 128) == 16);
  CHECK(ring_pollers_for(5, 16, 128) == 5);    // as configured
  CHECK(ring_pollers_for(1, 1000, 2) == 8);    // but never fewer than the sessions need
  CHECK(ring_pollers_for(1, 100000, 2) == 64);  // nor more than 64
}

}  // namespace
}  // namespace robustness
