// Host leases (ARCHITECTURE.md engine item 8, seed table 3.6): ReadGuards are shared, a
// WriteGuard is exclusive, conflicting live leases are Busy at once, pending device work
// is waited for (try_ forms: Busy), a submit conflicting with a live lease is Busy, and
// releasing a WriteGuard publishes the host's bytes. Leases reserve the whole allocation.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <type_traits>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

static_assert(!std::is_copy_constructible_v<WriteGuard>);
static_assert(!std::is_copy_assignable_v<WriteGuard>);
static_assert(!std::is_copy_constructible_v<ReadGuard>);
static_assert(!std::is_copy_assignable_v<ReadGuard>);
static_assert(std::is_nothrow_move_constructible_v<WriteGuard>);
static_assert(std::is_nothrow_move_constructible_v<ReadGuard>);
static_assert(std::is_nothrow_move_assignable_v<WriteGuard>);

TEST_CASE("read guards are shared", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 32);
  fill_on_host(b, 0x5A);
  const ReadGuard r1 = UNWRAP(b.map_read());
  const ReadGuard r2 = UNWRAP(b.try_map_read());
  const ReadGuard r3 = UNWRAP(b.view().map_read());
  const Buffer alias = b;
  const ReadGuard r4 = UNWRAP(alias.map_read());
  CHECK(r1.size() == 32);
  CHECK(r2.size() == 32);
  CHECK(std::to_integer<int>(r3.bytes()[31]) == 0x5A);
  CHECK(std::to_integer<int>(r4.bytes()[0]) == 0x5A);
}

TEST_CASE("a write guard excludes every other lease, at once", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 32);
  const Buffer alias = b;
  WriteGuard w = UNWRAP(b.map_write());
  CHECK_STATUS(b.try_map_read(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(b.map_read(), FailsWith(ErrorKind::Busy));  // a host conflict never waits
  CHECK_STATUS(b.try_map_write(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(b.map_write(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(alias.map_read(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(b.view().map_read(), FailsWith(ErrorKind::Busy));
  w.release();
  w.release();  // idempotent
  CHECK_OK(b.try_map_read());
  CHECK_OK(b.try_map_write());
}

TEST_CASE("a live read guard makes write leases Busy", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 32);
  ReadGuard r = UNWRAP(b.map_read());
  CHECK_STATUS(b.try_map_write(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(b.map_write(), FailsWith(ErrorKind::Busy));
  CHECK_OK(b.try_map_read());
  r.release();
  CHECK_OK(b.map_write());
}

TEST_CASE("a lease on one buffer does not affect another", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const WriteGuard wx = UNWRAP(x.map_write());
  CHECK_OK(y.try_map_write());
  const ExecutableGraph on_y = fill_graph(rt, y.view(), 3);
  run_once(on_y);
  CHECK(read_bytes(y) == repeated(16, 3));
}

TEST_CASE("try_ maps are Busy while device work writing the buffer is pending, blocking maps wait",
          "[conformance][leases]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const ExecutableGraph exec = sleep_graph(rt, x.view());
  const Completion pending = UNWRAP(exec.submit());
  CHECK_STATUS(x.try_map_read(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(x.try_map_write(), FailsWith(ErrorKind::Busy));

  SECTION("map_read waits for the writer and sees its bytes") {
    const ReadGuard r = UNWRAP(x.map_read());
    CHECK(pending.poll());
    std::uint32_t marker = 0;
    std::memcpy(&marker, r.data(), 4);
    CHECK(marker == kSleepMarker);
  }
  SECTION("map_write waits for the device work") {
    const WriteGuard w = UNWRAP(x.map_write());
    CHECK(pending.poll());
    std::uint32_t marker = 0;
    std::memcpy(&marker, w.data(), 4);
    CHECK(marker == kSleepMarker);
  }
}

TEST_CASE("pending device reads block host writes but not host reads", "[conformance][leases]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Buffer scratch = make_buffer(rt, 16);
  fill_on_host(x, 0x31);
  const Kernel sleeper = load_sleep(rt, kLongSleepUs);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(sleeper, {scratch.view()}));  // keeps the submission pending
  REQUIRE_OK(g.copy(y.view(), x.view()));         // the submission only reads x
  const ExecutableGraph exec = prepare(std::move(g));
  const Completion pending = UNWRAP(exec.submit());

  {
    const ReadGuard r = UNWRAP(x.try_map_read());
    CHECK(std::to_integer<int>(r.bytes()[0]) == 0x31);
  }
  CHECK_STATUS(x.try_map_write(), FailsWith(ErrorKind::Busy));
  const WriteGuard w = UNWRAP(x.map_write());  // waits for the whole submission
  CHECK(pending.poll());
  CHECK(read_bytes(y) == repeated(16, 0x31));
}

TEST_CASE("a submit that conflicts with a live write lease is Busy", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Buffer z = make_buffer(rt, 16);
  const ExecutableGraph reads_x = copy_graph(rt, y.view(), x.view());
  const ExecutableGraph writes_x = fill_graph(rt, x.view(), 9);
  const ExecutableGraph unrelated = fill_graph(rt, z.view(), 4);

  WriteGuard w = UNWRAP(x.map_write());
  std::memset(w.data(), 0x66, w.size());
  const std::uint64_t accepted = rt.statistics().submissions;
  CHECK_STATUS(reads_x.submit(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(writes_x.submit(), FailsWith(ErrorKind::Busy));
  CHECK(rt.statistics().submissions == accepted);
  run_once(unrelated);
  w.release();
  run_once(reads_x);
  CHECK(read_bytes(y) == repeated(16, 0x66));
}

TEST_CASE("a live read lease makes submits that write the buffer Busy, not ones that read it",
          "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  fill_on_host(x, 0x12);
  const ExecutableGraph reads_x = copy_graph(rt, y.view(), x.view());
  const ExecutableGraph writes_x = fill_graph(rt, x.view(), 0x34);

  ReadGuard r = UNWRAP(x.map_read());
  CHECK_STATUS(writes_x.submit(), FailsWith(ErrorKind::Busy));
  run_once(reads_x);
  CHECK(read_bytes(y) == repeated(16, 0x12));
  r.release();
  run_once(writes_x);
  CHECK(read_bytes(x) == repeated(16, 0x34));
}

TEST_CASE("releasing a WriteGuard makes the host's bytes visible to the next submission",
          "[conformance][leases]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 64);
  const Buffer y = make_buffer(rt, 64);
  const ExecutableGraph copy = copy_graph(rt, y.view(), x.view());
  run_once(copy);  // the device has touched x before the host writes it

  std::vector<std::uint8_t> pattern(64);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + 1);
  SECTION("by release()") {
    WriteGuard w = UNWRAP(x.map_write());
    std::memcpy(w.data(), pattern.data(), pattern.size());
    w.release();
    run_once(copy);
  }
  SECTION("by destruction") {
    {
      const WriteGuard w = UNWRAP(x.map_write());
      std::memcpy(w.data(), pattern.data(), pattern.size());
    }
    run_once(copy);
  }
  CHECK(read_bytes(y) == pattern);
}

TEST_CASE("a moved guard carries its lease", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 16);
  WriteGuard w = UNWRAP(b.map_write());
  WriteGuard moved = std::move(w);
  w.release();  // the moved-from guard holds nothing
  CHECK_STATUS(b.try_map_read(), FailsWith(ErrorKind::Busy));
  CHECK(moved.size() == 16);
  moved.release();
  ReadGuard r = UNWRAP(b.try_map_read());
  ReadGuard r2 = std::move(r);
  CHECK_STATUS(b.try_map_write(), FailsWith(ErrorKind::Busy));
  r2 = UNWRAP(b.try_map_read());  // move-assign releases the old lease, takes the new one
  r2.release();
  CHECK_OK(b.try_map_write());
}

TEST_CASE("mapping a view maps just that range but reserves the whole allocation", "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer b = make_buffer(rt, 64);
  const BufferView middle = slice_of(b, 16, 48);
  const BufferView head = slice_of(b, 0, 8);
  {
    const WriteGuard w = UNWRAP(middle.map_write());
    REQUIRE(w.size() == 32);
    std::memset(w.data(), 0xCC, w.size());
    CHECK_STATUS(b.try_map_read(), FailsWith(ErrorKind::Busy));
    CHECK_STATUS(head.map_read(), FailsWith(ErrorKind::Busy));  // disjoint bytes, same allocation
  }
  std::vector<std::uint8_t> expected(64, 0);
  std::fill(expected.begin() + 16, expected.begin() + 48, 0xCC);
  CHECK(read_bytes(b) == expected);

  const ReadGuard r = UNWRAP(middle.map_read());
  REQUIRE(r.size() == 32);
  CHECK(std::to_integer<int>(r.bytes()[0]) == 0xCC);
  CHECK(std::to_integer<int>(r.bytes()[31]) == 0xCC);
  CHECK(r.as<std::uint32_t>().size() == 8);
}

TEST_CASE("host leases and device work never overlap under contention", "[conformance][leases][stress]") {
  // One thread keeps submitting a fill of x; the test thread keeps taking write leases
  // on x and checks that the device never writes while it holds one. A submit that
  // meets the live lease is refused (Busy) and retried.
  const std::size_t workers = GENERATE(as<std::size_t>{}, 1, 2, 4);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  const Buffer x = make_buffer(rt, 4096);
  const ExecutableGraph fill = fill_graph(rt, x.view(), 0xEE);
  std::atomic<bool> stop{false};
  std::atomic<int> accepted{0};
  std::atomic<int> refused{0};
  std::string submit_error;
  std::thread submitter([&] {
    while (!stop.load()) {
      auto c = fill.submit();
      if (!c.ok()) {
        if (c.status().kind() != ErrorKind::Busy) {
          submit_error = c.status().to_string();
          return;
        }
        ++refused;
        std::this_thread::yield();
        continue;
      }
      ++accepted;
      if (Status s = c->wait(); !s.ok()) {
        submit_error = s.to_string();
        return;
      }
    }
  });
  // Leases alternate with short lease-free gaps so that submissions get through too.
  int leases = 0;
  int torn = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (torn == 0 && (leases < 200 || accepted.load() < 20) &&
         std::chrono::steady_clock::now() < deadline) {
    {
      auto w = x.map_write();
      if (!w.ok()) {
        INFO("map_write failed: " << w.status().to_string());
        CHECK(false);
        break;
      }
      std::memset(w->data(), 0x11, w->size());
      std::this_thread::yield();
      for (std::byte b : w->bytes()) torn += std::to_integer<int>(b) != 0x11;
      ++leases;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  submitter.join();
  INFO("leases " << leases << ", accepted submissions " << accepted.load() << ", refused " << refused.load());
  CHECK(submit_error == "");
  CHECK(torn == 0);
  CHECK(leases >= 200);
  CHECK(accepted.load() >= 20);
}

TEST_CASE("a lease on part of a buffer reserves the whole allocation against device work",
          "[conformance][leases]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer x = make_buffer(rt, 64);
  const ExecutableGraph writes_tail = fill_graph(rt, slice_of(x, 32, 64), 1);
  {
    const ReadGuard head = UNWRAP(slice_of(x, 0, 8).map_read());
    CHECK_STATUS(writes_tail.submit(), FailsWith(ErrorKind::Busy));
  }
  run_once(writes_tail);

  // And pending device work on part of it makes try_ maps of the whole Busy.
  const ExecutableGraph sleeps_on_tail = sleep_graph(rt, slice_of(x, 48, 64));
  const Completion pending = UNWRAP(sleeps_on_tail.submit());
  CHECK_STATUS(x.try_map_read(), FailsWith(ErrorKind::Busy));
  CHECK_STATUS(x.try_map_write(), FailsWith(ErrorKind::Busy));
  REQUIRE_OK(pending.wait());
  CHECK_OK(x.try_map_write());
}
