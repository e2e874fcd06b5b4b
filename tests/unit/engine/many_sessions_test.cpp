// Many tenants in one engine (engine item 13; scheduler.h, "Locking"): sessions keep
// their scheduling state under their own locks and hand ready work to workers through
// the ready queue, so many sessions submit and complete at once, and a session whose
// work is blocked holds up nobody else. Built for ThreadSanitizer too.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/support/device_set_fixture.h"
#include "tests/support/engine_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
using accord::testing::EngineFixture;
using accord::testing::ManualDevice;
using accord::testing::Observer;
namespace engine = accord::engine;

TEST_CASE("64 sessions submit and complete at once, each checking its own results",
          "[engine][scheduler][sessions]") {
  // 0 workers: each waiting thread runs its own session's work.
  const std::size_t workers = GENERATE(0, 2, 4);
  constexpr int kSessions = 64;
  constexpr int kRounds = 40;
  std::atomic<int> verified{0}, failures{0};
  DeviceSetOptions options;
  options.workers = workers;
  DeviceSetFixture f(options);
  std::vector<std::thread> tenants;
  for (int t = 0; t < kSessions; ++t) {
    tenants.emplace_back([&, t] {
      auto session = f.open();
      auto in = session->allocate(64, MemoryPlacement::host_visible()).value();
      auto out = session->allocate(64, MemoryPlacement::host_visible()).value();
      // Every fourth session goes through the (threaded) GPU: a device thread reports.
      const bool gpu = t % 4 == 0;
      auto staged = gpu ? session->allocate(64, MemoryPlacement::gpu_local(0)).value() : engine::Ref<engine::Allocation>();
      auto inc = gpu ? DeviceSetFixture::increment(*session, DeviceId::gpu(0)) : engine::Ref<engine::Kernel>();
      std::vector<engine::Ref<engine::PreparedGraph>> graphs;
      for (int v = 0; v < 2; ++v) {
        const auto value = static_cast<std::uint8_t>(2 * t + v);
        if (gpu)
          graphs.push_back(DeviceSetFixture::prepare(
              *session, {DeviceSetFixture::fill(in, value), DeviceSetFixture::kernel(inc, staged, in),
                         DeviceSetFixture::copy(out, staged)}));
        else
          graphs.push_back(DeviceSetFixture::prepare(
              *session, {DeviceSetFixture::fill(in, value), DeviceSetFixture::copy(out, in)}));
      }
      for (int round = 0; round < kRounds; ++round) {
        const int v = round % 2;
        auto s = session->submit(*graphs[static_cast<std::size_t>(v)], {});
        if (!s.ok()) {
          ++failures;
          continue;
        }
        const Status status = s.value()->wait();
        const auto expected = static_cast<std::uint8_t>(2 * t + v + (gpu ? 1 : 0));
        if (status.ok() && static_cast<std::uint8_t>(out->host_address()[63]) == expected) ++verified;
        else ++failures;
        s.value()->release_observer();
      }
    });
  }
  for (auto& t : tenants) t.join();
  CHECK(failures.load() == 0);
  CHECK(verified.load() == kSessions * kRounds);
  const Statistics stats = f.engine().statistics();
  CHECK(stats.submissions == static_cast<std::uint64_t>(kSessions * kRounds));
  CHECK(stats.completions == stats.submissions);
}

TEST_CASE("a session whose work is blocked does not hold up another session's ready work",
          "[engine][scheduler][sessions]") {
  EngineFixture f(GENERATE(1, 2));
  auto& device = f.device();
  engine::Session& blocked = f.session();
  auto other = f.engine().open_session({}, "other").value();
  auto a = f.buffer();
  auto producer = f.prepare({EngineFixture::fill(a)}).value();
  // Behind the running producer: a consumer by memory conflict, one by submit_after,
  // and a thread waiting for a host lease on the producer's buffer.
  auto behind = f.prepare({EngineFixture::copy_on(f.buffer(), a, LaneKind::Download)}).value();
  auto after = f.prepare({EngineFixture::fill(f.buffer())}).value();
  Observer p = f.submit(*producer).value();
  REQUIRE(device.wait_in_flight(1));
  const int producer_tag = device.in_flight_tags().at(0);
  Observer b = f.submit(*behind).value();
  Observer c = f.submit(*after, {p.s}).value();
  std::atomic<bool> leased{false};
  Status lease_status = internal_error("not acquired");
  std::thread lease([&] {
    lease_status = blocked.acquire_lease(*a, engine::LeaseMode::Read, true);
    leased = true;
  });

  // The other session's work starts and finishes while all of that waits.
  auto x = other->allocate(256, MemoryPlacement::host_visible()).value();
  engine::GraphSpec spec;
  spec.ops = {EngineFixture::fill(x)};
  auto g = other->prepare(std::move(spec)).value();
  for (int round = 0; round < 3; ++round) {
    Observer o(other->submit(*g, {}).value());
    REQUIRE(EngineFixture::eventually([&] { return device.in_flight_tags().size() == 2; }));
    for (int t : device.in_flight_tags())
      if (t != producer_tag) REQUIRE(device.complete(t));
    CHECK(o->wait().ok());
  }
  CHECK_FALSE(b->terminal());
  CHECK_FALSE(c->terminal());
  CHECK_FALSE(leased.load());

  // Then the blocked session drains in order.
  REQUIRE(device.complete(producer_tag));
  lease.join();
  REQUIRE(lease_status.ok());
  blocked.release_lease(*a, engine::LeaseMode::Read);
  REQUIRE(EngineFixture::eventually([&] { return device.in_flight_tags().size() == 2; }));
  for (int t : device.in_flight_tags()) REQUIRE(device.complete(t));
  CHECK(b->wait().ok());
  CHECK(c->wait().ok());
}

TEST_CASE("sessions opened and dropped while others run leave the engine consistent",
          "[engine][scheduler][sessions]") {
  // A session may be on the ready queue, or in the watchdog's and device loss's walk,
  // when its last reference goes (the queue and the walk retain it).
  DeviceSetOptions options;
  options.workers = GENERATE(0, 2);
  options.watchdog = std::chrono::milliseconds(200);  // walks the sessions every 25 ms
  DeviceSetFixture f(options);
  std::vector<std::thread> tenants;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    tenants.emplace_back([&] {
      for (int round = 0; round < 30; ++round) {
        auto session = f.open();
        auto in = session->allocate(64, MemoryPlacement::host_visible()).value();
        auto out = session->allocate(64, MemoryPlacement::host_visible()).value();
        auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(in, 7), DeviceSetFixture::copy(out, in)});
        auto s = session->submit(*g, {});
        if (!s.ok()) continue;  // counted as missing below (no Catch assertion off the main thread)
        if (round % 2 == 0) {
          if (s.value()->wait().ok() && static_cast<std::uint8_t>(out->host_address()[0]) == 7) ++ok;
        } else {
          s.value()->cancel();
          ++ok;
        }
        s.value()->release_observer();  // the session goes with its last object
      }
    });
  }
  for (auto& t : tenants) t.join();
  CHECK(ok.load() == 8 * 30);
}
