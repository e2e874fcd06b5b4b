// Native waits (scheduler.cpp pick_locked / execute): on a device that waits natively
// a same-device successor is launched while its predecessor still runs, with the
// predecessor in RegionWaits; on one that does not, and across devices or submissions,
// the host orders them. ThreadedDevice reports from its own lane threads and can be
// held, so each ordering is asserted from its event log, without sleeping.
#include <catch2/catch.hpp>

#include "tests/support/device_set_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
using accord::testing::ThreadedDevice;
using Kind = ThreadedDevice::EventKind;
namespace engine = accord::engine;

namespace {

int tag(const engine::Ref<engine::PreparedGraph>& g, std::size_t region) {
  return ThreadedDevice::tag(*g->regions()[region].native);
}

// Upload, increment, download: three regions on GPU lanes, each after the one before.
struct Pipeline {
  engine::Ref<engine::Allocation> in, staged, result, out;
  engine::Ref<engine::PreparedGraph> graph;

  explicit Pipeline(engine::Session& session, DeviceId gpu = DeviceId::gpu(0)) {
    in = session.allocate(256, MemoryPlacement::host_visible()).value();
    staged = session.allocate(256, MemoryPlacement::gpu_local(gpu.ordinal)).value();
    result = session.allocate(256, MemoryPlacement::gpu_local(gpu.ordinal)).value();
    out = session.allocate(256, MemoryPlacement::host_visible()).value();
    auto inc = DeviceSetFixture::increment(session, gpu);
    graph = DeviceSetFixture::prepare(session, {DeviceSetFixture::copy(staged, in), DeviceSetFixture::kernel(inc, result, staged),
                                                DeviceSetFixture::copy(out, result)});
  }
  bool out_is(std::uint8_t value) const {
    for (std::size_t i = 0; i < out->bytes(); ++i)
      if (static_cast<std::uint8_t>(out->host_address()[i]) != value) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("on a device that waits natively a same-device successor is launched before its predecessor ends",
          "[engine][scheduler][native-waits]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  DeviceSetFixture f(options);
  auto session = f.open();
  Pipeline p(*session);
  REQUIRE(p.graph->regions().size() == 3);
  CHECK(p.graph->regions()[1].native_waits);
  std::memset(p.in->host_address(), 9, p.in->bytes());

  f.gpu().hold();
  auto s = session->submit(*p.graph, {}).value();
  // All three are launched while the device is held, so none has ended.
  REQUIRE(f.gpu().wait_launches(3));
  CHECK(f.gpu().seq(Kind::End, tag(p.graph, 0)) == 0);
  f.gpu().release();
  REQUIRE(s->wait().ok());
  s->release_observer();
  // The device honoured the waits: each region started after the one before it ended.
  CHECK(f.gpu().seq(Kind::End, tag(p.graph, 0)) < f.gpu().seq(Kind::Start, tag(p.graph, 1)));
  CHECK(f.gpu().seq(Kind::End, tag(p.graph, 1)) < f.gpu().seq(Kind::Start, tag(p.graph, 2)));
  CHECK(p.out_is(10));
}

TEST_CASE("on a device that does not wait natively a successor is launched only after its predecessor ended",
          "[engine][scheduler][native-waits]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  options.native_waits = false;
  DeviceSetFixture f(options);
  auto session = f.open();
  Pipeline p(*session);
  CHECK_FALSE(p.graph->regions()[1].native_waits);
  std::memset(p.in->host_address(), 1, p.in->bytes());
  f.gpu().hold();
  auto s = session->submit(*p.graph, {}).value();
  REQUIRE(f.gpu().wait_launches(1));
  f.gpu().release();
  REQUIRE(s->wait().ok());
  s->release_observer();
  CHECK(f.gpu().seq(Kind::End, tag(p.graph, 0)) < f.gpu().seq(Kind::Launch, tag(p.graph, 1)));
  CHECK(f.gpu().seq(Kind::End, tag(p.graph, 1)) < f.gpu().seq(Kind::Launch, tag(p.graph, 2)));
  CHECK(p.out_is(2));
}

TEST_CASE("a successor on another device waits for its predecessor even when both wait natively",
          "[engine][scheduler][native-waits]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  options.gpus = 2;
  DeviceSetFixture f(options);
  auto session = f.open();
  auto a = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto b = session->allocate(64, MemoryPlacement::gpu_local(1)).value();
  auto out = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(a, 5), DeviceSetFixture::copy(b, a),
                                                DeviceSetFixture::copy(out, b)});
  REQUIRE(g->regions().size() == 3);
  f.gpu(0).hold();
  auto s = session->submit(*g, {}).value();
  REQUIRE(f.gpu(0).wait_launches(1));
  CHECK(f.gpu(1).launches() == 0);
  f.gpu(0).release();
  REQUIRE(s->wait().ok());
  s->release_observer();
  CHECK(f.gpu(0).seq(Kind::End, tag(g, 0)) < f.gpu(1).seq(Kind::Launch, tag(g, 1)));
  CHECK(static_cast<std::uint8_t>(out->host_address()[63]) == 5);
}

TEST_CASE("a later conflicting submission on the same device waits for the earlier one to end",
          "[engine][scheduler][native-waits]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  DeviceSetFixture f(options);
  auto session = f.open();
  auto a = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto out = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto writer = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(a, 4)});
  auto reader = DeviceSetFixture::prepare(*session, {DeviceSetFixture::copy(out, a)});
  f.gpu().hold();
  auto s1 = session->submit(*writer, {}).value();
  auto s2 = session->submit(*reader, {}).value();
  REQUIRE(f.gpu().wait_launches(1));
  f.gpu().release();
  REQUIRE(s2->wait().ok());
  REQUIRE(s1->wait().ok());
  s1->release_observer();
  s2->release_observer();
  CHECK(f.gpu().seq(Kind::End, tag(writer, 0)) < f.gpu().seq(Kind::Launch, tag(reader, 0)));
  CHECK(static_cast<std::uint8_t>(out->host_address()[0]) == 4);
}
