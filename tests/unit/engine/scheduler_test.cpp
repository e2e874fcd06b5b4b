// Scheduler behaviour on a ManualDevice, where the test decides when each region ends:
// region and lane ordering, whole-graph ordering across submissions, producers, the two
// Busy bounds, cancellation and failure. Runs with 1, 2 and 4 workers.
#include <catch2/catch.hpp>
#include <thread>

#include "tests/support/engine_fixture.h"

using accord::ErrorKind;
using accord::LaneKind;
using accord::Status;
using accord::testing::EngineFixture;
using accord::testing::ManualDevice;
using accord::testing::Observer;
namespace engine = accord::engine;

namespace {

int tag(const engine::Ref<engine::PreparedGraph>& g, std::size_t region) {
  return static_cast<ManualDevice::Region&>(*g->regions()[region].native).tag;
}

// Gives the workers a moment to launch anything they (wrongly) could.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

}  // namespace

TEST_CASE("a region starts only after its predecessor regions", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(b, a, LaneKind::Upload)}).value();
  REQUIRE(g->regions().size() == 2);
  REQUIRE(g->regions()[1].predecessors == std::vector<std::uint32_t>{0});
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  settle();
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g, 0)});
  REQUIRE(f.device().complete(tag(g, 0)));
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g, 1)});
  REQUIRE(f.device().complete(tag(g, 1)));
  CHECK(s->wait().ok());
}

TEST_CASE("independent regions on different lanes run at the same time", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer(), c = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(c, b, LaneKind::Upload)}).value();
  REQUIRE(g->regions().size() == 2);
  CHECK(g->regions()[1].predecessors.empty());
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(2));
  f.device().complete(tag(g, 0));
  f.device().complete(tag(g, 1));
  CHECK(s->wait().ok());
}

TEST_CASE("a lane runs one region of a session at a time", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::fill(b)}).value();
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2).value();
  REQUIRE(f.device().wait_in_flight(1));
  settle();
  REQUIRE(f.device().in_flight_tags() == std::vector<int>{tag(g1, 0)});  // earlier first
  f.device().complete(tag(g1, 0));
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g2, 0)});
  f.device().complete(tag(g2, 0));
  CHECK(s1->wait().ok());
  CHECK(s2->wait().ok());
}

TEST_CASE("a later submission that conflicts waits for the earlier one", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer();
  auto writer = f.prepare({EngineFixture::fill(a)}).value();
  auto reader = f.prepare({EngineFixture::copy_on(b, a, LaneKind::Download)}).value();
  auto s1 = f.submit(*writer).value();
  auto s2 = f.submit(*reader).value();
  REQUIRE(f.device().wait_in_flight(1));
  settle();
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(writer, 0)});
  f.device().complete(tag(writer, 0));
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(reader, 0)});
  f.device().complete(tag(reader, 0));
  CHECK(s2->wait().ok());
}

TEST_CASE("submissions that do not conflict overlap across lanes", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer(), c = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::copy_on(c, b, LaneKind::Upload)}).value();
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2).value();
  CHECK(f.device().wait_in_flight(2));
}

TEST_CASE("read-only submissions of one buffer do not order each other", "[engine][scheduler]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer(), b = f.buffer(), c = f.buffer();
  auto r1 = f.prepare({EngineFixture::copy_on(b, a, LaneKind::Upload)}).value();
  auto r2 = f.prepare({EngineFixture::copy_on(c, a, LaneKind::Download)}).value();
  auto s1 = f.submit(*r1).value();
  auto s2 = f.submit(*r2).value();
  CHECK(f.device().wait_in_flight(2));
}

TEST_CASE("max_submissions bounds pending submissions with Busy", "[engine][scheduler][bounds]") {
  engine::SessionLimits limits;
  limits.max_submissions = 2;
  EngineFixture f(GENERATE(1, 2), limits);
  auto a = f.buffer(), b = f.buffer(), c = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::fill(b)}).value();
  auto g3 = f.prepare({EngineFixture::fill(c)}).value();
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2).value();
  auto s3 = f.submit(*g3);
  REQUIRE_FALSE(s3.ok());
  CHECK(s3.status().kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(s3.status().message()), Catch::Contains("capacity"));
  REQUIRE(f.device().wait_in_flight(1));
  f.device().complete(tag(g1, 0));
  REQUIRE(s1->wait().ok());
  CHECK(f.submit(*g3).ok());  // capacity came back
}

TEST_CASE("a graph slot stays reserved while an observer of it lives", "[engine][scheduler][bounds]") {
  engine::SessionLimits limits;
  limits.graph_slots = 1;
  EngineFixture f(GENERATE(1, 2), limits);
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s1 = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  f.device().complete(tag(g, 0));
  REQUIRE(s1->wait().ok());
  auto again = f.submit(*g);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(again.status().message()), Catch::Contains("slots"));
  s1.reset();
  CHECK(f.submit(*g).ok());
}

TEST_CASE("cancel skips unstarted regions and drains the running one", "[engine][scheduler][cancel]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(b, a, LaneKind::Upload)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  s->cancel();
  settle();
  CHECK_FALSE(s->poll());  // the running region drains first
  f.device().complete(tag(g, 0));
  Status outcome = s->wait();
  CHECK(outcome.kind() == ErrorKind::Cancelled);
  CHECK(f.device().launch_count() == 1);
}

TEST_CASE("cancelling a queued submission releases the one behind it", "[engine][scheduler][cancel]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::fill(a)}).value();
  auto g3 = f.prepare({EngineFixture::fill(a)}).value();
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2).value();
  auto s3 = f.submit(*g3).value();
  REQUIRE(f.device().wait_in_flight(1));
  s2->cancel();
  CHECK(s2->wait().kind() == ErrorKind::Cancelled);
  f.device().complete(tag(g1, 0));
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g3, 0)});
  f.device().complete(tag(g3, 0));
  CHECK(s3->wait().ok());
}

TEST_CASE("a failed region poisons every allocation of its graph and quarantines it",
          "[engine][scheduler][failure]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer(), b = f.buffer(), c = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(b, a, LaneKind::Upload)}).value();
  auto other = f.prepare({EngineFixture::fill(c)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  f.device().fail(tag(g, 0), accord::execution_error("boom"));
  Status outcome = s->wait();
  REQUIRE(outcome.kind() == ErrorKind::Execution);
  CHECK_THAT(std::string(outcome.message()), Catch::Contains("boom"));
  CHECK(f.device().launch_count() == 1);  // the dependent region was skipped
  CHECK(a->poisoned());
  CHECK(b->poisoned());
  CHECK_FALSE(c->poisoned());
  CHECK(g->quarantined());
  s.reset();
  auto again = f.submit(*g);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().kind() == ErrorKind::DeviceLost);
  CHECK(f.session().acquire_lease(*a, engine::LeaseMode::Read, false).kind() == ErrorKind::DeviceLost);
  auto uses_poisoned = f.prepare({EngineFixture::fill(b)});
  CHECK(uses_poisoned.status().kind() == ErrorKind::DeviceLost);
  auto fine = f.submit(*other).value();
  REQUIRE(f.device().wait_in_flight(1));
  f.device().complete(tag(other, 0));
  CHECK(fine->wait().ok());
  CHECK(f.session().statistics().live_bytes == 3 * 256);  // poisoned memory is kept
}

TEST_CASE("submit_after waits for its producer even without a memory conflict",
          "[engine][scheduler][producers]") {
  EngineFixture f(GENERATE(1, 2, 4));
  auto a = f.buffer(), b = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::copy_on(b, b, LaneKind::Upload, 0)}).value();
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2, {s1.s}).value();
  REQUIRE(f.device().wait_in_flight(1));
  settle();
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g1, 0)});
  f.device().complete(tag(g1, 0));
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.device().in_flight_tags() == std::vector<int>{tag(g2, 0)});
  f.device().complete(tag(g2, 0));
  CHECK(s2->wait().ok());
}

TEST_CASE("a failed or cancelled producer fails its consumer", "[engine][scheduler][producers]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer(), b = f.buffer();
  auto g1 = f.prepare({EngineFixture::fill(a)}).value();
  auto g2 = f.prepare({EngineFixture::fill(b)}).value();
  const bool cancel = GENERATE(false, true);
  auto s1 = f.submit(*g1).value();
  auto s2 = f.submit(*g2, {s1.s}).value();
  REQUIRE(f.device().wait_in_flight(1));
  if (cancel) {
    s1->cancel();
    f.device().complete(tag(g1, 0));
  } else {
    f.device().fail(tag(g1, 0), accord::execution_error("producer broke"));
  }
  Status outcome = s2->wait();
  REQUIRE(outcome.kind() == ErrorKind::Execution);
  CHECK_THAT(std::string(outcome.message()), Catch::Contains("producer"));
  CHECK(f.device().launch_count() == 1);
}

TEST_CASE("host leases against pending device work", "[engine][scheduler][leases]") {
  EngineFixture f(GENERATE(1, 2));
  auto a = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a)}).value();
  auto s = f.submit(*g).value();
  REQUIRE(f.device().wait_in_flight(1));
  // A pending writer: try_ forms are Busy, a blocking read waits for it.
  Status busy = f.session().acquire_lease(*a, engine::LeaseMode::Read, false);
  CHECK(busy.kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(busy.message()), Catch::Contains("device use"));
  std::atomic<bool> got{false};
  std::thread reader([&] {
    got = f.session().acquire_lease(*a, engine::LeaseMode::Read, true).ok();
  });
  settle();
  CHECK_FALSE(got.load());
  f.device().complete(tag(g, 0));
  reader.join();
  REQUIRE(got.load());
  // A live read lease: writers are Busy at once, readers share, a writing submit is Busy.
  CHECK(f.session().acquire_lease(*a, engine::LeaseMode::Write, true).kind() == ErrorKind::Busy);
  REQUIRE(f.session().acquire_lease(*a, engine::LeaseMode::Read, false).ok());
  s.reset();
  auto blocked = f.submit(*g);
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.status().kind() == ErrorKind::Busy);
  CHECK_THAT(std::string(blocked.status().message()), Catch::Contains("host mapping"));
  f.session().release_lease(*a, engine::LeaseMode::Read);
  f.session().release_lease(*a, engine::LeaseMode::Read);
  CHECK(f.submit(*g).ok());
}

TEST_CASE("retained memory outlives every user handle until its work completes",
          "[engine][scheduler][retention]") {
  EngineFixture f(GENERATE(1, 2));
  Observer s;
  int t = 0;
  {
    auto a = f.buffer(1024);
    auto g = f.prepare({EngineFixture::fill(a)}).value();
    t = tag(g, 0);
    s = f.submit(*g).value();
  }  // buffer and graph handles dropped while the work is in flight
  REQUIRE(f.device().wait_in_flight(1));
  CHECK(f.session().statistics().live_bytes == 1024);
  s.reset();  // and the observer
  CHECK(f.session().statistics().live_bytes == 1024);
  f.device().complete(t);
  CHECK(EngineFixture::eventually([&] { return f.session().statistics().live_bytes == 0; }));
}
