// Host leases on the submission ring, written as raw ring entries the way a hostile or
// buggy client could: a lease granted at once, one that waits behind a running
// submission without holding up its own ring or another session's, and bad entries
// answered Invalid naming the object at fault. gRPC sees the same lease table, so the
// tests cross-check ring leases with gRPC calls. Waiting leases use the test plugin's
// test.sleep_us to keep a submission running.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "proto/wire/submission_ring.h"
#include "tests/robustness/raw_ring.h"
#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

using accord::ErrorKind;
using namespace std::chrono_literals;

std::uint32_t code_of(ErrorKind kind) { return 1 + static_cast<std::uint32_t>(kind); }

wire::SubmitEntry lease_entry(std::uint64_t tag, std::uint64_t buffer, std::uint64_t offset, std::uint64_t length,
                              std::uint32_t flags) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::AcquireLease);
  entry.tag = tag;
  entry.handle = buffer;
  entry.offset = offset;
  entry.length = length;
  entry.count = flags;
  return entry;
}

wire::SubmitEntry release_entry(std::uint64_t tag, std::uint64_t lease) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::ReleaseLease);
  entry.tag = tag;
  entry.handle = lease;
  return entry;
}

grpc::Status grpc_lease(Stub& stub, const Session& s, std::uint64_t buffer, bool write, bool wait) {
  v1::AcquireLeaseRequest request;
  request.set_buffer(buffer);
  request.set_write(write);
  request.set_wait(wait);
  v1::AcquireLeaseResponse response;
  return stub.AcquireLease(make_context(s).get(), request, &response);
}

grpc::Status grpc_release(Stub& stub, const Session& s, std::uint64_t buffer, bool write) {
  v1::ReleaseLeaseRequest request;
  request.set_buffer(buffer);
  request.set_write(write);
  v1::ReleaseLeaseResponse response;
  return stub.ReleaseLease(make_context(s).get(), request, &response);
}

// A prepared graph that keeps `buffer` in device use for `microseconds`.
std::uint64_t sleeping_graph(Stub& stub, const Session& s, std::uint64_t buffer, std::uint32_t microseconds) {
  std::uint64_t kernel = 0, graph = 0;
  REQUIRE_OK(load_kernel(stub, s, sleep_request(microseconds), &kernel));
  v1::PrepareGraphRequest request;
  v1::KernelOp* op = request.add_nodes()->mutable_host_kernel();
  op->set_kernel(kernel);
  set_view(op->add_bindings(), buffer, 0, 4);
  REQUIRE_OK(prepare(stub, s, request, &graph));
  return graph;
}

std::uint64_t fill_graph(Stub& stub, const Session& s, std::uint64_t buffer, std::uint64_t bytes) {
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, bytes, 0x11);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  return graph;
}

constexpr std::uint64_t write_lease(std::uint64_t buffer) { return (buffer << 1) | 1; }
constexpr std::uint64_t read_lease(std::uint64_t buffer) { return buffer << 1; }

}  // namespace

TEST_CASE("a lease on the ring is granted at once and ended by the handle it was answered with",
          "[daemon][robustness][ring][leases]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  RawRing ring(s);
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 64, &buffer));

  ring.push(lease_entry(1, buffer, 0, 64, wire::kLeaseWrite));
  const RawRing::Answer granted = ring.expect(1);
  CHECK(granted.entry.status == 0);
  CHECK(granted.entry.opcode == static_cast<std::uint32_t>(wire::RingOp::AcquireLease));
  CHECK(granted.entry.handle == write_lease(buffer));
  // The engine holds it: gRPC, which shares the lease table, sees the conflict.
  CHECK_STATUS(grpc_lease(stub, s, buffer, false, false), grpc::StatusCode::RESOURCE_EXHAUSTED,
               "buffer handle " + std::to_string(buffer), "conflicting host mapping");
  // A second write lease on the ring is Busy too, even when it may wait (a host conflict never waits).
  ring.push(lease_entry(2, buffer, 0, 64, wire::kLeaseWrite | wire::kLeaseWait));
  const RawRing::Answer refused = ring.expect(2);
  CHECK(refused.entry.status == code_of(ErrorKind::Busy));
  CHECK_THAT(refused.message, Catch::Matchers::Contains("buffer handle " + std::to_string(buffer)));

  ring.push(release_entry(3, granted.entry.handle));
  CHECK(ring.expect(3).entry.status == 0);
  // Ended: read leases (a part of the buffer, waiting allowed) are shared, over both paths.
  ring.push(lease_entry(4, buffer, 16, 8, wire::kLeaseWait));
  const RawRing::Answer read = ring.expect(4);
  CHECK(read.entry.status == 0);
  CHECK(read.entry.handle == read_lease(buffer));
  REQUIRE_OK(grpc_lease(stub, s, buffer, false, false));
  REQUIRE_OK(grpc_release(stub, s, buffer, false));
  ring.push(release_entry(5, read.entry.handle));
  CHECK(ring.expect(5).entry.status == 0);
  // Both read leases are gone: a write lease is granted.
  REQUIRE_OK(grpc_lease(stub, s, buffer, true, false));
  REQUIRE_OK(grpc_release(stub, s, buffer, true));
}

TEST_CASE("a ring lease that waits for a running submission holds up neither its ring nor other sessions",
          "[daemon][robustness][ring][leases]") {
  INFO("ACCORD_TEST_PLUGIN_PATH is empty: tests/plugins did not define accord_test_plugin");
  REQUIRE(std::string(ACCORD_TEST_PLUGIN_PATH) != "");
  // One poller thread: every ring is served by the thread the waiting lease came in on.
  TestDaemon d([](accord::service::DaemonConfig& config) { config.ring_poller_threads = 1; });
  Stub& stub = d.stub();
  const Session a = d.open_session();
  const Session b = d.open_session();
  RawRing ring_a(a);
  RawRing ring_b(b);

  std::uint64_t busy = 0, other = 0, b_buffer = 0;
  REQUIRE_OK(allocate(stub, a, 64, &busy));
  REQUIRE_OK(allocate(stub, a, 64, &other));
  REQUIRE_OK(allocate(stub, b, 256, &b_buffer));
  // Long enough to outlast everything session b does below, even on a loaded machine.
  const std::uint64_t sleeper = sleeping_graph(stub, a, busy, 3'000'000);
  const std::uint64_t b_fill = fill_graph(stub, b, b_buffer, 256);

  ring_a.push(submit_entry(10, sleeper));
  const RawRing::Answer accepted = ring_a.expect(10);
  REQUIRE(accepted.entry.status == 0);
  REQUIRE(accepted.entry.terminal == 0);
  // Without waiting: Busy at once, naming the buffer.
  ring_a.push(lease_entry(11, busy, 0, 64, wire::kLeaseWrite));
  const RawRing::Answer busy_now = ring_a.expect(11);
  CHECK(busy_now.entry.status == code_of(ErrorKind::Busy));
  CHECK_THAT(busy_now.message, Catch::Matchers::Contains("buffer handle " + std::to_string(busy)));
  CHECK_THAT(busy_now.message, Catch::Matchers::Contains("in device use"));

  // Waiting: parked. The entries after it on the same ring are answered meanwhile.
  const auto parked_at = std::chrono::steady_clock::now();
  ring_a.push(lease_entry(12, busy, 0, 64, wire::kLeaseWrite | wire::kLeaseWait));
  ring_a.push(lease_entry(13, other, 0, 64, wire::kLeaseWrite));
  const RawRing::Answer other_lease = ring_a.expect(13);
  CHECK(other_lease.entry.status == 0);
  // And another session's submissions run start to finish.
  for (std::uint64_t tag = 20; tag < 23; ++tag) {
    ring_b.push(submit_entry(tag, b_fill));
    const RawRing::Answer b_accepted = ring_b.expect(tag);
    REQUIRE(b_accepted.entry.status == 0);
    const RawRing::Answer b_done = ring_b.expect(tag);
    CHECK(b_done.entry.terminal == 1);
    CHECK(b_done.entry.status == 0);
    v1::ReleaseCompletionRequest release;
    release.set_completion(b_done.entry.handle);
    v1::ReleaseCompletionResponse released;
    REQUIRE_OK(stub.ReleaseCompletion(make_context(b).get(), release, &released));
  }
  const auto served_after = std::chrono::steady_clock::now() - parked_at;
  INFO("session b was served within " << std::chrono::duration_cast<std::chrono::milliseconds>(served_after).count()
                                      << " ms of the lease being parked");
  // Proof that nothing waited for the lease: all of that ended while the sleeper, and so
  // the lease, still waited (it cannot be granted before the sleeper ends).
  v1::PollCompletionRequest poll;
  poll.set_completion(accepted.entry.handle);
  v1::CompletionEvent sleeper_state;
  REQUIRE_OK(stub.PollCompletion(make_context(a).get(), poll, &sleeper_state));
  REQUIRE(sleeper_state.state() == v1::COMPLETION_STATE_PENDING);

  // The sleeper ends first, then the lease is granted: one answer each, in that order.
  const RawRing::Answer ended = ring_a.expect(10, 20s);
  CHECK(ended.entry.terminal == 1);
  CHECK(ended.entry.status == 0);
  const RawRing::Answer granted = ring_a.expect(12, 5s);
  CHECK(granted.entry.status == 0);
  CHECK(granted.entry.handle == write_lease(busy));
  // Held, as over gRPC.
  CHECK_STATUS(grpc_lease(stub, a, busy, false, false), grpc::StatusCode::RESOURCE_EXHAUSTED, "conflicting host mapping");
  ring_a.push(release_entry(14, granted.entry.handle));
  CHECK(ring_a.expect(14).entry.status == 0);
  ring_a.push(release_entry(15, other_lease.entry.handle));
  CHECK(ring_a.expect(15).entry.status == 0);
  CHECK_FALSE(ring_a.next(50ms).has_value());  // nothing else was owed
  require_serving(d, stub, a);
}

TEST_CASE("a session that closes while its ring lease waits leaves the daemon serving",
          "[daemon][robustness][ring][leases]") {
  INFO("ACCORD_TEST_PLUGIN_PATH is empty: tests/plugins did not define accord_test_plugin");
  REQUIRE(std::string(ACCORD_TEST_PLUGIN_PATH) != "");
  TestDaemon d;
  Stub& stub = d.stub();
  {
    Session a = d.open_session();
    RawRing ring(a);
    std::uint64_t buffer = 0;
    REQUIRE_OK(allocate(stub, a, 64, &buffer));
    const std::uint64_t sleeper = sleeping_graph(stub, a, buffer, 2'000'000);
    ring.push(submit_entry(1, sleeper));
    REQUIRE(ring.expect(1).entry.status == 0);
    ring.push(lease_entry(2, buffer, 0, 64, wire::kLeaseWait));
    CHECK_FALSE(ring.next(50ms).has_value());  // parked
    a.channel.reset();                          // the client dies with its lease waiting
  }
  CHECK(eventually([&] { return d.daemon().session_count() == 0; }, 5000));
  require_serving(d);
}

TEST_CASE("bad lease entries on the ring are Invalid, name the object, and disturb nothing",
          "[daemon][robustness][ring][leases]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  const Session stranger = d.open_session();
  RawRing ring(s);
  std::uint64_t buffer = 0, foreign = 0, spare = 0;
  REQUIRE_OK(allocate(stub, s, 64, &buffer));
  // Handles count per session: the stranger's buffer gets a number this session has not used.
  REQUIRE_OK(allocate(stub, stranger, 64, &spare));
  REQUIRE_OK(allocate(stub, stranger, 64, &spare));
  REQUIRE_OK(allocate(stub, stranger, 64, &foreign));
  REQUIRE(foreign != buffer);
  const std::string name = "buffer handle " + std::to_string(buffer);

  struct Case {
    const char* what;
    wire::SubmitEntry entry;
    std::string fragment;
  };
  const Case cases[] = {
      {"an unknown buffer", lease_entry(1, 999'999, 0, 64, 0), "unknown buffer handle 999999"},
      {"another session's buffer", lease_entry(2, foreign, 0, 64, wire::kLeaseWrite),
       "unknown buffer handle " + std::to_string(foreign)},
      {"an offset past the end", lease_entry(3, buffer, 65, 1, 0), name + " (64 bytes)"},
      {"a length past the end", lease_entry(4, buffer, 60, 8, wire::kLeaseWrite), name + " (64 bytes)"},
      {"a range that wraps around", lease_entry(5, buffer, ~std::uint64_t{0}, 2, 0), name + " (64 bytes)"},
      {"an empty range", lease_entry(6, buffer, 0, 0, 0), name},
      {"undefined flags", lease_entry(7, buffer, 0, 64, 4), "lease flags 4 of " + name},
      {"an unknown lease", release_entry(8, 12'345), "lease handle 12345"},
      {"a lease not held", release_entry(9, write_lease(buffer)), "lease handle " + std::to_string(write_lease(buffer))},
      {"another session's lease", release_entry(10, read_lease(foreign)),
       "lease handle " + std::to_string(read_lease(foreign))},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ring.push(c.entry);
    const RawRing::Answer answer = ring.expect(c.entry.tag);
    CHECK(answer.entry.status == code_of(ErrorKind::Invalid));
    CHECK(answer.entry.opcode == c.entry.opcode);
    CHECK(answer.entry.handle == 0);
    CHECK_THAT(answer.message, Catch::Matchers::Contains(c.fragment));
  }
  CHECK_FALSE(ring.next(50ms).has_value());  // one answer per entry, nothing else

  // Nothing was leased by any of them: both sessions' buffers take write leases now.
  REQUIRE_OK(grpc_lease(stub, s, buffer, true, false));
  REQUIRE_OK(grpc_release(stub, s, buffer, true));
  REQUIRE_OK(grpc_lease(stub, stranger, foreign, true, false));
  REQUIRE_OK(grpc_release(stub, stranger, foreign, true));
  // The same ring still serves a good lease.
  ring.push(lease_entry(11, buffer, 0, 64, wire::kLeaseWrite));
  const RawRing::Answer good = ring.expect(11);
  CHECK(good.entry.status == 0);
  ring.push(release_entry(12, good.entry.handle));
  CHECK(ring.expect(12).entry.status == 0);
  require_serving(d, stub, s);
  require_serving(d, stub, stranger);
}

}  // namespace robustness
