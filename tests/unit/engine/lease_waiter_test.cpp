// Leases that wait without a thread (scheduler_leases.cpp: acquire_lease_or_wait,
// cancel_lease_wait): a queued LeaseWaiter is told once, when the conflicting
// submission ends, with the same outcome a blocking acquire would have had. On
// ManualDevice, so the test decides when work ends; the blocking path is in
// scheduler_test.cpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tests/support/engine_fixture.h"

using accord::ErrorKind;
using accord::Status;
using accord::testing::EngineFixture;
using accord::testing::ManualDevice;
namespace engine = accord::engine;

namespace {

int tag(const engine::Ref<engine::PreparedGraph>& g, std::size_t region) {
  return static_cast<ManualDevice::Region&>(*g->regions()[region].native).tag;
}

// Records its outcome; `order` (shared) records which waiter was told when.
struct RecordingWaiter final : engine::LeaseWaiter {
  explicit RecordingWaiter(int id_, std::vector<int>* order_ = nullptr, std::mutex* order_mu_ = nullptr)
      : id(id_), order(order_), order_mu(order_mu_) {}
  void on_lease(Status status) noexcept override {
    outcome = std::move(status);
    told_on = std::this_thread::get_id();
    if (order != nullptr) {
      const std::lock_guard lock(*order_mu);
      order->push_back(id);
    }
    told.fetch_add(1, std::memory_order_release);
  }
  bool was_told() const { return told.load(std::memory_order_acquire) > 0; }

  int id;
  std::vector<int>* order;
  std::mutex* order_mu;
  std::optional<Status> outcome;
  std::thread::id told_on;
  std::atomic<int> told{0};
};

}  // namespace

TEST_CASE("a lease without conflicting work is granted at once and queues nothing", "[engine][leases][waiter]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  RecordingWaiter waiter(1);
  auto held = f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Write, waiter);
  REQUIRE(held.ok());
  CHECK(held.value());
  CHECK(f.session().acquire_lease(*a, engine::LeaseMode::Read, false).kind() == ErrorKind::Busy);
  f.session().release_lease(*a, engine::LeaseMode::Write);
  CHECK_FALSE(f.session().cancel_lease_wait(waiter));  // never queued
  CHECK_FALSE(waiter.was_told());
}

TEST_CASE("a waiting lease is told when the conflicting submission ends, and then holds the lease",
          "[engine][leases][waiter]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));

  RecordingWaiter waiter(1);
  auto held = f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Read, waiter);
  REQUIRE(held.ok());
  CHECK_FALSE(held.value());  // queued; this thread goes on
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(waiter.was_told());

  f.device().complete(tag(g, 0));
  REQUIRE(EngineFixture::eventually([&] { return waiter.was_told(); }));
  CHECK(waiter.told.load() == 1);
  REQUIRE(waiter.outcome.has_value());
  CHECK(waiter.outcome->ok());
  // Told by the thread that ended the work: ManualDevice reports on the completing thread.
  CHECK(waiter.told_on == std::this_thread::get_id());
  CHECK(s->wait().ok());
  // Held: a writer is Busy, and so is a submission that writes the buffer.
  CHECK(f.session().acquire_lease(*a, engine::LeaseMode::Write, false).kind() == ErrorKind::Busy);
  s.reset();
  auto blocked = f.submit(*g);
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.status().kind() == ErrorKind::Busy);
  f.session().release_lease(*a, engine::LeaseMode::Read);
  CHECK(f.submit(*g).ok());
}

TEST_CASE("waiters are settled in arrival order: a granted writer makes a later one Busy",
          "[engine][leases][waiter]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  std::vector<int> order;
  std::mutex order_mu;
  RecordingWaiter first(1, &order, &order_mu), second(2, &order, &order_mu);
  REQUIRE_FALSE(f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Write, first).value());
  REQUIRE_FALSE(f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Write, second).value());
  f.device().complete(tag(g, 0));
  REQUIRE(EngineFixture::eventually([&] { return first.was_told() && second.was_told(); }));
  CHECK(order == std::vector<int>{1, 2});
  REQUIRE(first.outcome.has_value());
  CHECK(first.outcome->ok());
  REQUIRE(second.outcome.has_value());
  CHECK(second.outcome->kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(second.outcome->message()), Catch::Contains("conflicting host mapping"));
  f.session().release_lease(*a, engine::LeaseMode::Write);
}

TEST_CASE("a cancelled waiter is never told and holds nothing", "[engine][leases][waiter]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  RecordingWaiter waiter(1);
  REQUIRE_FALSE(f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Write, waiter).value());
  CHECK(f.session().cancel_lease_wait(waiter));
  CHECK_FALSE(f.session().cancel_lease_wait(waiter));  // once
  f.device().complete(tag(g, 0));
  CHECK(s->wait().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(waiter.was_told());
  REQUIRE(f.session().acquire_lease(*a, engine::LeaseMode::Write, false).ok());
  f.session().release_lease(*a, engine::LeaseMode::Write);
}

TEST_CASE("a waiter on memory its work poisoned is refused with DeviceLost", "[engine][leases][waiter]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  RecordingWaiter waiter(1);
  REQUIRE_FALSE(f.session().acquire_lease_or_wait(*a, engine::LeaseMode::Read, waiter).value());
  f.device().fail(tag(g, 0), accord::execution_error("boom"));
  REQUIRE(EngineFixture::eventually([&] { return waiter.was_told(); }));
  REQUIRE(waiter.outcome.has_value());
  CHECK(waiter.outcome->kind() == ErrorKind::DeviceLost);
  CHECK_THAT(std::string(waiter.outcome->message()), Catch::Contains("poisoned"));
  CHECK(s->wait().kind() == ErrorKind::Execution);
}
