// Device loss and the watchdog (scheduler_watchdog.cpp, device_registry.cpp): a lost
// device fails everyone's work on it with DeviceLost and refuses new work naming the
// device, while the host keeps working; work that found the device lost before launch
// poisons nothing; a region that never reports is failed by the watchdog with
// Execution and its device marked lost.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/support/device_set_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
namespace engine = accord::engine;

namespace {

bool mentions(const Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("a device that reports loss fails every session's work on it with DeviceLost while host work completes",
          "[engine][device-loss]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  DeviceSetFixture f(options);
  auto alice = f.open(), bob = f.open();
  struct Tenant {
    engine::Ref<engine::Allocation> gpu_buf, host_buf;
    engine::Ref<engine::PreparedGraph> gpu_graph, host_graph;
  };
  auto make = [](engine::Session& s) {
    Tenant t;
    t.gpu_buf = s.allocate(64, MemoryPlacement::gpu_local(0)).value();
    t.host_buf = s.allocate(64, MemoryPlacement::host_visible()).value();
    t.gpu_graph = DeviceSetFixture::prepare(s, {DeviceSetFixture::fill(t.gpu_buf, 1)});
    t.host_graph = DeviceSetFixture::prepare(s, {DeviceSetFixture::fill(t.host_buf, 2)});
    return t;
  };
  Tenant a = make(*alice), b = make(*bob);

  f.gpu().hold();
  auto a_gpu = alice->submit(*a.gpu_graph, {}).value();
  auto b_gpu = bob->submit(*b.gpu_graph, {}).value();
  REQUIRE(f.gpu().wait_launches(1));
  f.gpu().lose("driver reset");

  const Status a_status = a_gpu->wait(), b_status = b_gpu->wait();
  CHECK(a_status.kind() == ErrorKind::DeviceLost);
  CHECK(b_status.kind() == ErrorKind::DeviceLost);
  a_gpu->release_observer();
  b_gpu->release_observer();

  // The host is untouched.
  for (auto* t : {&a, &b}) {
    auto* s = (t == &a ? alice : bob)->submit(*t->host_graph, {}).value();
    CHECK(s->wait().ok());
    s->release_observer();
    CHECK(static_cast<std::uint8_t>(t->host_buf->host_address()[0]) == 2);
  }

  // Everything on the GPU is refused at once, naming the device and the cause.
  auto again = alice->submit(*a.gpu_graph, {});
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().kind() == ErrorKind::DeviceLost);
  CHECK(mentions(again.status(), "gpu:0"));
  CHECK(mentions(again.status(), "driver reset"));
  auto allocation = bob->allocate(64, MemoryPlacement::gpu_local(0));
  REQUIRE_FALSE(allocation.ok());
  CHECK(allocation.status().kind() == ErrorKind::DeviceLost);
  engine::GraphSpec spec;
  spec.ops = {DeviceSetFixture::fill(b.gpu_buf, 3)};
  auto prepared = bob->prepare(std::move(spec));
  REQUIRE_FALSE(prepared.ok());
  CHECK(prepared.status().kind() == ErrorKind::DeviceLost);

  const auto& registry = f.engine().devices();
  CHECK(registry.state(1) == devices::DeviceState::Lost);
  CHECK(registry.loss_cause(1).find("driver reset") != std::string::npos);
  CHECK(registry.state(0) == devices::DeviceState::Present);
  CHECK(registry.losses() == 1);
  CHECK(f.lost_reports() == std::vector<devices::DeviceIndex>{1});
}

TEST_CASE("a submission that finds its device lost before launch fails with DeviceLost and poisons nothing",
          "[engine][device-loss]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2, 4);
  options.gpus = 2;
  DeviceSetFixture f(options);
  auto session = f.open();
  auto on_gpu1 = session->allocate(64, MemoryPlacement::gpu_local(1)).value();
  auto on_gpu0 = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto out = session->allocate(64, MemoryPlacement::host_visible()).value();
  // Region 0 on gpu:1, then a copy into gpu:0 memory, which runs on gpu:0.
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(on_gpu1, 6), DeviceSetFixture::copy(on_gpu0, on_gpu1)});
  REQUIRE(g->regions().size() == 2);
  REQUIRE(g->regions()[1].device == 1);  // gpu:0 is index 1, gpu:1 index 2
  f.gpu(1).hold();
  auto s = session->submit(*g, {}).value();
  REQUIRE(f.gpu(1).wait_launches(1));
  f.gpu(0).lose("gone");
  f.gpu(1).release();
  const Status status = s->wait();
  s->release_observer();
  CHECK(status.kind() == ErrorKind::DeviceLost);
  CHECK(mentions(status, "gpu:0"));
  // Nothing ran on the lost device, so nothing was poisoned: gpu:1's memory still works.
  CHECK_FALSE(on_gpu1->poisoned());
  CHECK_FALSE(g->quarantined());
  auto check = DeviceSetFixture::prepare(*session, {DeviceSetFixture::copy(out, on_gpu1)});
  auto s2 = session->submit(*check, {}).value();
  CHECK(s2->wait().ok());
  s2->release_observer();
  CHECK(static_cast<std::uint8_t>(out->host_address()[10]) == 6);
}

TEST_CASE("a region that never reports is failed by the watchdog and its device marked lost",
          "[engine][device-loss][watchdog]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2);
  options.watchdog = std::chrono::milliseconds(100);
  DeviceSetFixture f(options);
  auto session = f.open();
  auto gpu_buf = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto host_buf = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto hung = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(gpu_buf, 1)});
  auto host = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(host_buf, 1)});
  f.gpu().hold();  // never released: the region hangs
  auto s = session->submit(*hung, {}).value();
  const Status status = s->wait();
  s->release_observer();
  CHECK(status.kind() == ErrorKind::Execution);
  CHECK(mentions(status, "did not complete within 100 ms"));
  CHECK(f.engine().devices().lost(1));
  CHECK(f.lost_reports() == std::vector<devices::DeviceIndex>{1});
  CHECK(hung->quarantined());  // its completion is uncertain: memory kept, never reused
  auto h = session->submit(*host, {}).value();
  CHECK(h->wait().ok());
  h->release_observer();
  // The abandoned region no longer counts as in flight (the host region's own count
  // drops just after its waiter wakes, hence the short poll).
  for (int i = 0; i < 5000 && f.engine().scheduler().regions_in_flight() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(f.engine().scheduler().regions_in_flight() == 0);
}

TEST_CASE("a device that recovers after a loss serves new work, while everything made before the loss stays lost",
          "[engine][device-loss][recovery]") {
  DeviceSetOptions options;
  options.workers = GENERATE(1, 2);
  DeviceSetFixture f(options);
  auto session = f.open();
  auto old_gpu = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto host_buf = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto old_graph = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(old_gpu, 1)});
  // Host memory admitted to the GPU before the loss: the allocation survives (its home
  // is the host), and a graph prepared after recovery admits it to the new GPU again.
  auto old_upload = DeviceSetFixture::prepare(*session, {DeviceSetFixture::copy(old_gpu, host_buf)});
  auto& registry = f.engine().devices();
  const std::uint32_t before = registry.generation(1);

  f.gpu().lose("illegal address in kernel 'bad'");
  CHECK(registry.lost(1));
  f.gpu().recover("executor restarted (pid 42)");
  CHECK_FALSE(registry.lost(1));
  CHECK(registry.generation(1) == before + 1);
  CHECK(registry.recoveries() == 1);
  CHECK(registry.recoveries(1) == 1);
  const auto history = registry.history(1);
  REQUIRE(history.size() == 2);
  CHECK(history[0].kind == devices::DeviceEvent::Kind::Lost);
  CHECK(history[0].what.find("illegal address") != std::string::npos);
  CHECK(history[1].kind == devices::DeviceEvent::Kind::Recovered);
  CHECK(history[1].what == "executor restarted (pid 42)");

  // The old graph, the old memory and a graph over the old memory: DeviceLost, naming
  // the device and the loss that ended their generation.
  auto stale = session->submit(*old_graph, {});
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.status().kind() == ErrorKind::DeviceLost);
  CHECK(mentions(stale.status(), "gpu:0"));
  CHECK(mentions(stale.status(), "restarted"));
  CHECK(mentions(stale.status(), "illegal address"));
  CHECK(session->submit(*old_upload, {}).status().kind() == ErrorKind::DeviceLost);
  engine::GraphSpec spec;
  spec.ops = {DeviceSetFixture::fill(old_gpu, 3)};
  auto over_old = session->prepare(std::move(spec));
  REQUIRE_FALSE(over_old.ok());
  CHECK(over_old.status().kind() == ErrorKind::DeviceLost);
  CHECK(mentions(over_old.status(), "restarted"));

  // New memory and graphs run, including host memory admitted again after the restart.
  auto fresh = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto fill = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(fresh, 7)});
  auto s = session->submit(*fill, {}).value();
  CHECK(s->wait().ok());
  s->release_observer();
  auto round_trip = DeviceSetFixture::prepare(
      *session, {DeviceSetFixture::copy(fresh, host_buf), DeviceSetFixture::copy(host_buf, fresh)});
  auto r = session->submit(*round_trip, {}).value();
  CHECK(r->wait().ok());
  r->release_observer();
  CHECK(f.lost_reports() == std::vector<devices::DeviceIndex>{1});
}

TEST_CASE("a session of an isolation group runs on its own device, and a loss there spares the shared one",
          "[engine][device-loss][isolation]") {
  DeviceSetOptions options;
  options.isolated_gpu0 = {"uid:7"};
  DeviceSetFixture f(options);
  engine::SessionLimits isolated_limits;
  isolated_limits.isolation = "uid:7";
  auto shared = f.open(), isolated = f.open(isolated_limits);
  auto& registry = f.engine().devices();
  REQUIRE(registry.size() == 3);  // host, shared gpu:0, uid:7's gpu:0
  CHECK(registry.isolation(2) == "uid:7");
  CHECK(registry.find(DeviceId::gpu(0)) == 1);
  CHECK(registry.find(DeviceId::gpu(0), "uid:7") == 2);
  CHECK(registry.find(DeviceId::gpu(0), "uid:8") == 1);  // a group without its own device shares

  auto a = shared->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto b = isolated->allocate(64, MemoryPlacement::gpu_local(0)).value();
  CHECK(a->home() == 1);
  CHECK(b->home() == 2);
  auto ga = DeviceSetFixture::prepare(*shared, {DeviceSetFixture::fill(a, 1)});
  auto gb = DeviceSetFixture::prepare(*isolated, {DeviceSetFixture::fill(b, 2)});
  CHECK(ga->regions()[0].device == 1);
  CHECK(gb->regions()[0].device == 2);

  f.gpu(0).lose("illegal address");  // the shared executor faults
  CHECK(shared->submit(*ga, {}).status().kind() == ErrorKind::DeviceLost);
  auto s = isolated->submit(*gb, {}).value();
  CHECK(s->wait().ok());
  s->release_observer();
  CHECK(registry.describe().find("gpu:0 [uid:7]") != std::string::npos);
}
