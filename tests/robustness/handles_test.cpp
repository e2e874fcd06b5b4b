// Handles a client never got, handles of the wrong kind, another session's handles, and
// calls without (or with a forged) session token.
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

// Every call that takes a handle, with `handle` in that slot, must answer NOT_FOUND
// naming the handle and its kind.
void check_all_unknown(Stub& stub, const Session& s, std::uint64_t handle) {
  const std::string number = std::to_string(handle);
  INFO("handle " << number);
  CHECK_STATUS(free_buffer(stub, s, handle), grpc::StatusCode::NOT_FOUND, "buffer handle " + number);
  {
    v1::ReleaseGraphRequest request;
    request.set_graph(handle);
    v1::ReleaseGraphResponse response;
    CHECK_STATUS(stub.ReleaseGraph(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "graph handle " + number);
  }
  CHECK_STATUS(submit(stub, s, handle, {}, nullptr), grpc::StatusCode::NOT_FOUND, "graph handle " + number);
  {
    v1::CompletionEvent event;
    CHECK_STATUS(wait_completion(stub, s, handle, &event), grpc::StatusCode::NOT_FOUND,
                 "completion handle " + number);
    CHECK(event.state() == v1::COMPLETION_STATE_UNSPECIFIED);  // no event streamed
  }
  {
    v1::CancelRequest request;
    request.set_completion(handle);
    v1::CancelResponse response;
    CHECK_STATUS(stub.Cancel(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "completion handle " + number);
  }
  {
    v1::PollCompletionRequest request;
    request.set_completion(handle);
    v1::CompletionEvent response;
    CHECK_STATUS(stub.PollCompletion(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "completion handle " + number);
  }
  {
    v1::ReleaseCompletionRequest request;
    request.set_completion(handle);
    v1::ReleaseCompletionResponse response;
    CHECK_STATUS(stub.ReleaseCompletion(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "completion handle " + number);
  }
  for (const bool write : {false, true}) {
    for (const bool wait : {false, true}) {
      v1::AcquireLeaseRequest request;
      request.set_buffer(handle);
      request.set_write(write);
      request.set_wait(wait);
      v1::AcquireLeaseResponse response;
      CHECK_STATUS(stub.AcquireLease(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                   "buffer handle " + number);
    }
  }
  {
    v1::ReleaseLeaseRequest request;
    request.set_buffer(handle);
    v1::ReleaseLeaseResponse response;
    CHECK_STATUS(stub.ReleaseLease(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "buffer handle " + number);
  }
  {
    v1::ReleaseKernelRequest request;
    request.set_kernel(handle);
    v1::ReleaseKernelResponse response;
    CHECK_STATUS(stub.ReleaseKernel(make_context(s).get(), request, &response), grpc::StatusCode::NOT_FOUND,
                 "kernel handle " + number);
  }
  {
    v1::PrepareGraphRequest request;
    add_fill(request, handle, 0, 16, 1);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::NOT_FOUND, "graph node 0 binding 0",
                 "buffer handle " + number);
  }
  {
    v1::PrepareGraphRequest request;
    v1::Node* node = request.add_nodes();
    node->mutable_host_kernel()->set_kernel(handle);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::NOT_FOUND, "graph node 0",
                 "kernel handle " + number);
  }
}

}  // namespace

TEST_CASE("unknown handles are NOT_FOUND, naming the handle", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();

  for (const std::uint64_t handle : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345},
                                     std::numeric_limits<std::uint64_t>::max()}) {
    check_all_unknown(stub, s, handle);
    require_serving(d, stub, s);
  }

  // An unknown producer among valid ones.
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 64, &buffer));
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 64, 7);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  std::uint64_t first = 0;
  REQUIRE_OK(submit(stub, s, graph, {}, &first));
  CHECK_STATUS(submit(stub, s, graph, {first, 999}, nullptr), grpc::StatusCode::NOT_FOUND, "producer 1",
               "completion handle 999");
  // The failed submit released the observer it had taken on `first`: it still completes
  // and can be released exactly once.
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, first, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  v1::ReleaseCompletionRequest release;
  release.set_completion(first);
  v1::ReleaseCompletionResponse released;
  REQUIRE_OK(stub.ReleaseCompletion(make_context(s).get(), release, &released));
  CHECK_STATUS(stub.ReleaseCompletion(make_context(s).get(), release, &released), grpc::StatusCode::NOT_FOUND,
               "completion handle " + std::to_string(first));
  require_serving(d, stub, s);
}

TEST_CASE("a handle of the wrong kind is NOT_FOUND and leaves the object alone", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();

  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 256, &buffer));
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 256, 3);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  std::uint64_t kernel = 0;
  REQUIRE_OK(load_kernel(stub, s, add_f32_request(16), &kernel));
  std::uint64_t completion = 0;
  REQUIRE_OK(submit(stub, s, graph, {}, &completion));
  const std::string b = std::to_string(buffer), g = std::to_string(graph), k = std::to_string(kernel),
                    c = std::to_string(completion);

  // A buffer handle where a graph, completion or kernel belongs.
  {
    v1::ReleaseGraphRequest r;
    r.set_graph(buffer);
    v1::ReleaseGraphResponse out;
    CHECK_STATUS(stub.ReleaseGraph(make_context(s).get(), r, &out), grpc::StatusCode::NOT_FOUND, "graph handle " + b);
  }
  CHECK_STATUS(submit(stub, s, buffer, {}, nullptr), grpc::StatusCode::NOT_FOUND, "graph handle " + b);
  CHECK_STATUS(submit(stub, s, graph, {buffer}, nullptr), grpc::StatusCode::NOT_FOUND, "producer 0",
               "completion handle " + b);
  CHECK_STATUS(wait_completion(stub, s, buffer, nullptr), grpc::StatusCode::NOT_FOUND, "completion handle " + b);
  {
    v1::CancelRequest r;
    r.set_completion(buffer);
    v1::CancelResponse out;
    CHECK_STATUS(stub.Cancel(make_context(s).get(), r, &out), grpc::StatusCode::NOT_FOUND, "completion handle " + b);
  }
  {
    v1::ReleaseKernelRequest r;
    r.set_kernel(buffer);
    v1::ReleaseKernelResponse out;
    CHECK_STATUS(stub.ReleaseKernel(make_context(s).get(), r, &out), grpc::StatusCode::NOT_FOUND,
                 "kernel handle " + b);
  }
  {
    v1::PrepareGraphRequest r;
    r.add_nodes()->mutable_host_kernel()->set_kernel(buffer);
    CHECK_STATUS(prepare(stub, s, r, nullptr), grpc::StatusCode::NOT_FOUND, "graph node 0", "kernel handle " + b);
  }
  // Graph, kernel and completion handles where a buffer belongs.
  for (const std::uint64_t wrong : {graph, kernel, completion}) {
    const std::string w = std::to_string(wrong);
    CHECK_STATUS(free_buffer(stub, s, wrong), grpc::StatusCode::NOT_FOUND, "buffer handle " + w);
    v1::AcquireLeaseRequest lease;
    lease.set_buffer(wrong);
    v1::AcquireLeaseResponse leased;
    CHECK_STATUS(stub.AcquireLease(make_context(s).get(), lease, &leased), grpc::StatusCode::NOT_FOUND,
                 "buffer handle " + w);
    v1::PrepareGraphRequest r;
    add_fill(r, buffer, 0, 16, 1);
    add_fill(r, wrong, 0, 16, 1);
    CHECK_STATUS(prepare(stub, s, r, nullptr), grpc::StatusCode::NOT_FOUND, "graph node 1 binding 0",
                 "buffer handle " + w);
  }
  // A completion handle as a graph, a graph handle as a completion.
  CHECK_STATUS(submit(stub, s, completion, {}, nullptr), grpc::StatusCode::NOT_FOUND, "graph handle " + c);
  CHECK_STATUS(wait_completion(stub, s, graph, nullptr), grpc::StatusCode::NOT_FOUND, "completion handle " + g);

  // Nothing was dropped by the wrong-kind calls: every object still works, once.
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, completion, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  v1::ReleaseCompletionRequest rc;
  rc.set_completion(completion);
  v1::ReleaseCompletionResponse rc_out;
  REQUIRE_OK(stub.ReleaseCompletion(make_context(s).get(), rc, &rc_out));
  std::uint64_t again = 0;
  REQUIRE_OK(submit(stub, s, graph, {}, &again));
  REQUIRE_OK(wait_completion(stub, s, again, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  v1::ReleaseKernelRequest rk;
  rk.set_kernel(kernel);
  v1::ReleaseKernelResponse rk_out;
  REQUIRE_OK(stub.ReleaseKernel(make_context(s).get(), rk, &rk_out));
  REQUIRE_OK(free_buffer(stub, s, buffer));
  CHECK_STATUS(free_buffer(stub, s, buffer), grpc::StatusCode::NOT_FOUND, "buffer handle " + b);  // double free
  require_serving(d, stub, s);
}

TEST_CASE("another session's handles are indistinguishable from unknown ones", "[daemon][robustness]") {
  TestDaemon d;
  const Session a = d.open_session();
  const Session b = d.open_session();
  REQUIRE(a.id != b.id);
  REQUIRE(a.token != b.token);
  Stub& stub_a = d.stub();
  auto stub_b = d.new_stub();  // B is another client process: its own connection

  // Several objects in A, so A's handles are numbers B never issued.
  std::uint64_t buffer = 0, spare = 0;
  REQUIRE_OK(allocate(stub_a, a, 256, &spare));
  REQUIRE_OK(allocate(stub_a, a, 256, &buffer));
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 256, 9);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub_a, a, request, &graph));
  std::uint64_t kernel = 0;
  REQUIRE_OK(load_kernel(stub_a, a, add_f32_request(16), &kernel));
  std::uint64_t completion = 0;
  REQUIRE_OK(submit(stub_a, a, graph, {}, &completion));

  for (const std::uint64_t handle : {buffer, graph, kernel, completion}) {
    check_all_unknown(*stub_b, b, handle);
    require_serving(d, *stub_b, b);
  }
  // The exact message an unknown handle gets: nothing reveals that the handle exists.
  {
    v1::FreeRequest r;
    r.set_buffer(buffer);
    v1::FreeResponse out;
    const grpc::Status status = stub_b->Free(make_context(b).get(), r, &out);
    CHECK(status.error_message() == "unknown buffer handle " + std::to_string(buffer) + " in this session");
  }
  // A's session channel does not map B's handles either, and vice versa.
  wire::MapBufferPayload map;
  map.buffer = buffer;
  REQUIRE(wire::send_payload(b.channel.get(), wire::MessageType::MapBuffer, 5, map).ok());
  CHECK_THAT(read_error_message(b.channel.get()), Catch::Matchers::Contains("buffer handle " + std::to_string(buffer)));

  // A's objects are intact after B's attempts.
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub_a, a, completion, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  REQUIRE_OK(free_buffer(stub_a, a, buffer));
  require_serving(d, stub_a, a);
  require_serving(d, *stub_b, b);
}

TEST_CASE("calls without a valid session token are UNAUTHENTICATED", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  const std::optional<std::string> none;

  // No metadata at all.
  {
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    CHECK_STATUS(stub.GetSessionInfo(make_context(none).get(), request, &info), grpc::StatusCode::UNAUTHENTICATED,
                 "accord-session");
    v1::AllocateRequest allocate_request;
    allocate_request.set_bytes(64);
    v1::AllocateResponse allocated;
    CHECK_STATUS(stub.Allocate(make_context(none).get(), allocate_request, &allocated),
                 grpc::StatusCode::UNAUTHENTICATED, "accord-session");
    // The streaming and the off-thread handlers authenticate too.
    v1::WaitCompletionRequest wait;
    wait.set_completion(1);
    auto context = make_context(none);
    auto reader = stub.WaitCompletion(context.get(), wait);
    v1::CompletionEvent event;
    CHECK_FALSE(reader->Read(&event));
    CHECK_STATUS(reader->Finish(), grpc::StatusCode::UNAUTHENTICATED, "accord-session");
    v1::AcquireLeaseRequest lease;
    lease.set_buffer(1);
    lease.set_wait(true);
    v1::AcquireLeaseResponse leased;
    CHECK_STATUS(stub.AcquireLease(make_context(none).get(), lease, &leased), grpc::StatusCode::UNAUTHENTICATED,
                 "accord-session");
  }
  // Forged tokens: garbage, empty, the right shape but unissued, the real one in
  // upper case, the real one with a suffix or truncated.
  std::string upper = s.token;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const bool has_letters = upper != s.token;
  for (const std::string& token :
       {std::string("garbage"), std::string(), std::string(wire::kTokenChars, '0'), has_letters ? upper : "x" + s.token,
        s.token + "0", s.token.substr(0, wire::kTokenChars - 1), std::string(4000, 'a')}) {
    INFO("token '" << token.substr(0, 64) << "'");
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    CHECK_STATUS(stub.GetSessionInfo(make_context(std::optional<std::string>(token)).get(), request, &info),
                 grpc::StatusCode::UNAUTHENTICATED, "session token");
    std::uint64_t buffer = 0;
    CHECK_STATUS(allocate(stub, Session{UniqueFd(), token, 0}, 64, &buffer), grpc::StatusCode::UNAUTHENTICATED,
                 "session token");
  }

  // ListDevices and ListSessions need no session.
  {
    v1::ListDevicesRequest request;
    v1::ListDevicesResponse devices;
    REQUIRE_OK(stub.ListDevices(make_context(none).get(), request, &devices));
    REQUIRE(devices.devices_size() >= 1);
    CHECK(devices.devices(0).kind() == "host");
    v1::ListSessionsRequest list;
    v1::ListSessionsResponse sessions;
    REQUIRE_OK(stub.ListSessions(make_context(none).get(), list, &sessions));
    CHECK(sessions.sessions_size() == 1);
  }
  // The real token still works after all the forgeries.
  {
    v1::GetSessionInfoRequest request;
    v1::SessionInfo info;
    REQUIRE_OK(stub.GetSessionInfo(make_context(s).get(), request, &info));
    CHECK(info.session_id() == s.id);
    CHECK(info.label() == "robustness");
  }
  require_serving(d, stub, s);
}

}  // namespace robustness

namespace robustness {

TEST_CASE("freeing a leased buffer does not strand its lease", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 4096, &buffer));
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 4096, 0x11);
  std::uint64_t graph = 0;  // retains the buffer's memory after its handle is gone
  REQUIRE_OK(prepare(stub, s, request, &graph));

  v1::AcquireLeaseRequest lease;
  lease.set_buffer(buffer);
  lease.set_write(true);
  v1::AcquireLeaseResponse leased;
  REQUIRE_OK(stub.AcquireLease(make_context(s).get(), lease, &leased));
  // While the host holds the write lease, device work on the buffer is refused.
  CHECK_STATUS(submit(stub, s, graph, {}, nullptr), grpc::StatusCode::RESOURCE_EXHAUSTED);

  const grpc::Status freed = free_buffer(stub, s, buffer);
  v1::ReleaseLeaseRequest release;
  release.set_buffer(buffer);
  release.set_write(true);
  v1::ReleaseLeaseResponse released;
  if (freed.ok()) {
    // The handle is gone, so its lease cannot be released by handle any more: it must
    // have ended with the handle, as it does when the session closes.
    CHECK_STATUS(stub.ReleaseLease(make_context(s).get(), release, &released), grpc::StatusCode::NOT_FOUND,
                 "buffer handle " + std::to_string(buffer));
    std::uint64_t completion = 0;
    const grpc::Status submitted = submit(stub, s, graph, {}, &completion);
    INFO("submit after freeing the leased buffer: " << code_name(submitted.error_code()) << " '"
                                                     << submitted.error_message() << "'");
    CHECK(submitted.ok());
    if (submitted.ok()) {
      v1::CompletionEvent event;
      REQUIRE_OK(wait_completion(stub, s, completion, &event));
      CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
    }
  } else {
    // Or Free refuses while the lease is held, saying so; releasing then freeing works.
    CHECK_THAT(freed.error_message(), Catch::Matchers::Contains("lease"));
    REQUIRE_OK(stub.ReleaseLease(make_context(s).get(), release, &released));
    REQUIRE_OK(free_buffer(stub, s, buffer));
  }
  require_serving(d, stub, s);
}

}  // namespace robustness

namespace robustness {

TEST_CASE("lease conflicts are RESOURCE_EXHAUSTED naming the buffer handle", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  // A few buffers first, so the handle under test is not the engine's internal id.
  for (int i = 0; i < 4; ++i) REQUIRE_OK(allocate(stub, s, 64, nullptr));
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 4096, &buffer));
  const std::string handle = "buffer handle " + std::to_string(buffer);
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 4096, 0x22);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));

  auto lease = [&](bool write, bool acquire) {
    if (acquire) {
      v1::AcquireLeaseRequest r;
      r.set_buffer(buffer);
      r.set_write(write);
      v1::AcquireLeaseResponse out;
      return stub.AcquireLease(make_context(s).get(), r, &out);
    }
    v1::ReleaseLeaseRequest r;
    r.set_buffer(buffer);
    r.set_write(write);
    v1::ReleaseLeaseResponse out;
    return stub.ReleaseLease(make_context(s).get(), r, &out);
  };
  REQUIRE_OK(lease(true, true));
  CHECK_STATUS(lease(true, true), grpc::StatusCode::RESOURCE_EXHAUSTED, handle);
  CHECK_STATUS(lease(false, true), grpc::StatusCode::RESOURCE_EXHAUSTED, handle);
  {
    const grpc::Status status = submit(stub, s, graph, {}, nullptr);
    INFO("submit while leased: " << code_name(status.error_code()) << " '" << status.error_message() << "'");
    CHECK(status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    // The client knows the buffer by its handle and the graph by its nodes.
    CHECK((status.error_message().find(handle) != std::string::npos ||
           status.error_message().find("graph node 0") != std::string::npos));
  }
  REQUIRE_OK(lease(true, false));
  CHECK_STATUS(lease(true, false), grpc::StatusCode::INVALID_ARGUMENT, "no write lease", handle);
  CHECK_STATUS(lease(false, false), grpc::StatusCode::INVALID_ARGUMENT, "no read lease", handle);
  std::uint64_t completion = 0;
  REQUIRE_OK(submit(stub, s, graph, {}, &completion));
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, completion, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  require_serving(d, stub, s);
}

}  // namespace robustness
