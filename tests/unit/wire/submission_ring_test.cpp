// The submission ring (proto/wire/ring_layout.h, ring_queue.h, submission_ring.h): the
// layout both sides agree on, full and corrupt queues, headers a client must refuse,
// doorbells that wake a sleeper, and the two directions between two real processes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "proto/wire/submission_ring.h"

namespace accord::wire {
namespace {

using namespace std::chrono_literals;

SubmissionRing make_ring(RingGeometry geometry = {8, 16}) {
  auto ring = SubmissionRing::create(geometry);
  REQUIRE(ring.ok());
  return std::move(ring).value();
}

SubmissionRing attach_copy(const SubmissionRing& ring) {
  auto attached = SubmissionRing::attach(UniqueFd(::dup(ring.fd())));
  REQUIRE(attached.ok());
  return std::move(attached).value();
}

SubmitEntry submit_entry(std::uint64_t tag) {
  SubmitEntry e;
  e.opcode = static_cast<std::uint32_t>(RingOp::Submit);
  e.count = 1;
  e.tag = tag;
  e.handle = 1000 + tag;
  e.producers[0] = tag > 0 ? tag - 1 : 0;
  return e;
}

// A sealed memfd holding `bytes` copied from `data`, padded to `size`.
UniqueFd sealed_file(const void* data, std::size_t bytes, std::size_t size, bool seal = true) {
  UniqueFd fd(::memfd_create("test-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  REQUIRE(fd);
  REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
  REQUIRE(::pwrite(fd.get(), data, bytes, 0) == static_cast<ssize_t>(bytes));
  if (seal) REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  return fd;
}

TEST_CASE("a submission and its completion travel between the two mappings of one ring", "[wire][ring]") {
  SubmissionRing daemon = make_ring();
  SubmissionRing client = attach_copy(daemon);
  CHECK(client.geometry().sq_capacity == 8);
  CHECK(client.geometry().cq_capacity == 16);

  RingProducer<SubmitEntry> submit(client.submissions());
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  REQUIRE(submit.try_push(submit_entry(7)));
  SubmitEntry got;
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  CHECK(got.opcode == static_cast<std::uint32_t>(RingOp::Submit));
  CHECK(got.tag == 7);
  CHECK(got.handle == 1007);
  CHECK(got.producers[0] == 6);
  CHECK(serve.try_pop(got) == PopResult::Empty);

  RingProducer<CompletionEntry> complete(daemon.completions());
  RingConsumer<CompletionEntry> take(client.completions());
  CompletionEntry done;
  done.tag = 7;
  done.opcode = got.opcode;
  done.status = 1 + static_cast<std::uint32_t>(ErrorKind::Execution);
  done.terminal = 1;
  done.message_bytes = daemon.write_message(complete.next_position(), "region 2 failed on gpu:0");
  done.elapsed_us = 12.5;
  REQUIRE(complete.try_push(done));
  CompletionEntry seen;
  std::uint32_t position = 0;
  REQUIRE(take.try_pop(seen, &position) == PopResult::Ok);
  CHECK(seen.tag == 7);
  CHECK(seen.status == 1 + static_cast<std::uint32_t>(ErrorKind::Execution));
  CHECK(seen.elapsed_us == 12.5);
  CHECK(client.read_message(position, seen.message_bytes) == "region 2 failed on gpu:0");
  CHECK(client.read_message(position, 1u << 30).size() == sizeof(RingMessage::text));  // clamped to the slot
}

TEST_CASE("a full queue refuses a push until the consumer frees a position", "[wire][ring]") {
  SubmissionRing daemon = make_ring({4, 4});
  SubmissionRing client = attach_copy(daemon);
  RingProducer<SubmitEntry> submit(client.submissions());
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  for (std::uint64_t i = 0; i < 4; ++i) REQUIRE(submit.try_push(submit_entry(i)));
  CHECK(submit.full());
  CHECK_FALSE(submit.try_push(submit_entry(99)));
  SubmitEntry got;
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  CHECK(got.tag == 0);
  CHECK(submit.try_push(submit_entry(4)));
  for (std::uint64_t i = 1; i <= 4; ++i) {  // order kept across the wrap
    REQUIRE(serve.try_pop(got) == PopResult::Ok);
    CHECK(got.tag == i);
  }
}

TEST_CASE("has_room counts the positions the consumer freed, and none past an impossible index", "[wire][ring]") {
  SubmissionRing daemon = make_ring({4, 4});
  SubmissionRing client = attach_copy(daemon);
  RingProducer<SubmitEntry> submit(client.submissions());
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  CHECK(submit.has_room(4));
  CHECK_FALSE(submit.has_room(5));
  for (std::uint64_t i = 0; i < 3; ++i) REQUIRE(submit.try_push(submit_entry(i)));
  CHECK(submit.has_room(1));
  CHECK_FALSE(submit.has_room(2));
  SubmitEntry got;
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  CHECK(submit.has_room(3));  // reads the consumer's index again
  CHECK_FALSE(submit.has_room(4));
  // A head past the tail (a consumer claiming entries never pushed): no room at all.
  daemon.submissions().head->value.store(1000);
  CHECK_FALSE(submit.has_room(4));
  CHECK_FALSE(submit.has_room(1));
}

TEST_CASE("indices the other side scribbles on cannot move this side's own", "[wire][ring]") {
  SubmissionRing daemon = make_ring({4, 4});
  SubmissionRing client = attach_copy(daemon);
  RingProducer<SubmitEntry> submit(client.submissions());
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  REQUIRE(submit.try_push(submit_entry(1)));
  // A hostile client rewrites the daemon's head: the consumer keeps its private index.
  client.submissions().head->value.store(12345);
  SubmitEntry got;
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  CHECK(got.tag == 1);
  CHECK(serve.try_pop(got) == PopResult::Empty);
  // A tail claiming more entries than the queue holds is corrupt: nothing is read.
  client.submissions().tail->value.store(1 + 4 + 3);
  CHECK(serve.try_pop(got) == PopResult::Corrupt);
  // A head the consumer never wrote makes the producer see corruption, not free space.
  daemon.completions().head->value.store(1000);
  RingProducer<CompletionEntry> complete(daemon.completions());
  CHECK(complete.corrupt());
  CHECK_FALSE(complete.try_push(CompletionEntry{}));
}

TEST_CASE("create refuses capacities that are not powers of two in range", "[wire][ring]") {
  for (RingGeometry g : {RingGeometry{3, 8}, RingGeometry{8, 0}, RingGeometry{1, 8}, RingGeometry{8, 1u << 17}}) {
    auto ring = SubmissionRing::create(g);
    REQUIRE_FALSE(ring.ok());
    CHECK(ring.status().kind() == ErrorKind::Invalid);
  }
}

TEST_CASE("attach refuses a file that is not a ring accordd made", "[wire][ring]") {
  SubmissionRing daemon = make_ring();
  // The header's bytes as accordd wrote them; each section edits one field of a copy.
  struct alignas(64) HeaderBytes {
    unsigned char bytes[sizeof(RingHeader)];
    RingHeader& fields() { return *reinterpret_cast<RingHeader*>(bytes); }
  };
  HeaderBytes header;
  REQUIRE(::pread(daemon.fd(), header.bytes, sizeof header.bytes, 0) == static_cast<ssize_t>(sizeof header.bytes));
  const std::size_t size = daemon.bytes();

  SECTION("too small for a header") {
    auto r = SubmissionRing::attach(sealed_file(header.bytes, 16, 16));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("less than a header") != std::string::npos);
  }
  SECTION("not sealed") {
    auto r = SubmissionRing::attach(sealed_file(header.bytes, sizeof header.bytes, size, false));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("not sealed") != std::string::npos);
  }
  SECTION("bad magic") {
    HeaderBytes bad = header;
    bad.fields().magic = 0x12345678;
    auto r = SubmissionRing::attach(sealed_file(bad.bytes, sizeof bad.bytes, size));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("magic") != std::string::npos);
  }
  SECTION("another major version") {
    HeaderBytes bad = header;
    bad.fields().version_major = kRingVersionMajor + 1;
    auto r = SubmissionRing::attach(sealed_file(bad.bytes, sizeof bad.bytes, size));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("version") != std::string::npos);
  }
  SECTION("capacities larger than the file") {
    HeaderBytes bad = header;
    bad.fields().cq_capacity = 1u << 16;
    auto r = SubmissionRing::attach(sealed_file(bad.bytes, sizeof bad.bytes, size));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().kind() == ErrorKind::Invalid);
  }
  SECTION("an offset that points elsewhere") {
    HeaderBytes bad = header;
    bad.fields().message_offset += 64;
    auto r = SubmissionRing::attach(sealed_file(bad.bytes, sizeof bad.bytes, size));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("offsets") != std::string::npos);
  }
}

TEST_CASE("a consumer asleep on the doorbell wakes for a push, and times out without one", "[wire][ring]") {
  SubmissionRing daemon = make_ring();
  SubmissionRing client = attach_copy(daemon);
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(serve.wait(0ns, 20ms));
  CHECK(std::chrono::steady_clock::now() - t0 >= 20ms);

  bool pushed = false;
  std::thread producer([&] {
    std::this_thread::sleep_for(30ms);  // the consumer is asleep by then
    RingProducer<SubmitEntry> submit(client.submissions());
    pushed = submit.try_push(submit_entry(3));
  });
  CHECK(serve.wait(0ns, 10s));
  producer.join();
  REQUIRE(pushed);
  SubmitEntry got;
  REQUIRE(serve.try_pop(got) == PopResult::Ok);
  CHECK(got.tag == 3);
  CHECK(daemon.submissions().bell->sleepers.load() == 0);
}

TEST_CASE("two processes exchange thousands of entries through the ring in order", "[wire][ring][process]") {
  constexpr std::uint64_t kCount = 5000;
  SubmissionRing daemon = make_ring({16, 16});
  const int fd = ::dup(daemon.fd());
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the client: attaches to the fd as a client of accordd would
    auto ring = SubmissionRing::attach(UniqueFd(fd));
    if (!ring.ok()) ::_exit(2);
    RingProducer<SubmitEntry> submit(ring.value().submissions());
    RingConsumer<CompletionEntry> take(ring.value().completions());
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
    while (received < kCount) {
      while (sent < kCount && sent - received < 8 && submit.try_push(submit_entry(sent))) ++sent;
      CompletionEntry done;
      if (take.try_pop(done) == PopResult::Ok) {
        if (done.tag != received) ::_exit(3);
        ++received;
      } else if (!take.wait(2us, 5s)) {
        ::_exit(4);
      }
    }
    ::_exit(0);
  }
  ::close(fd);
  RingConsumer<SubmitEntry> serve(daemon.submissions());
  RingProducer<CompletionEntry> complete(daemon.completions());
  std::uint64_t served = 0;
  while (served < kCount) {
    SubmitEntry got;
    const PopResult r = serve.try_pop(got);
    REQUIRE(r != PopResult::Corrupt);
    if (r == PopResult::Empty) {
      REQUIRE(serve.wait(2us, 5s));
      continue;
    }
    REQUIRE(got.tag == served);
    CompletionEntry done;
    done.tag = got.tag;
    done.terminal = 1;
    REQUIRE(complete.try_push(done));  // at most 8 in flight: never full
    ++served;
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace accord::wire
