// "Submit does no heap allocation" (ARCHITECTURE.md engine item 3), checked by counting
// operator new calls on the submitting thread: on the ManualDevice, and end to end on
// the real host device in inline mode, where the region also runs on this thread.
#include <catch2/catch.hpp>

#include "daemon/devices/host/host_registration.h"
#include "tests/support/counting_new.h"
#include "tests/support/engine_fixture.h"



namespace engine = accord::engine;
using accord::testing::EngineFixture;
using accord::testing::ManualDevice;
using accord::testing::allocations_during;


TEST_CASE("submit, complete and wait allocate nothing on the ManualDevice", "[engine][scheduler][alloc]") {
  EngineFixture f(1);
  auto a = f.buffer(), b = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(b, a, accord::LaneKind::Upload)}).value();
  const int t0 = static_cast<ManualDevice::Region&>(*g->regions()[0].native).tag;
  const int t1 = static_cast<ManualDevice::Region&>(*g->regions()[1].native).tag;
  long allocations = 0;
  for (int i = 0; i < 100; ++i) {
    engine::Submission* s = nullptr;
    allocations += allocations_during([&] { s = f.session().submit(*g, {}).value(); });
    REQUIRE(f.device().wait_in_flight(1));
    allocations += allocations_during([&] { f.device().complete(t0); });
    REQUIRE(f.device().wait_in_flight(1));
    bool ok = false;
    allocations += allocations_during([&] {
      f.device().complete(t1);
      ok = s->wait().ok();
      s->release_observer();
    });
    REQUIRE(ok);
  }
  CHECK(allocations == 0);
}

TEST_CASE("a prepared host graph submits and runs without allocating", "[engine][scheduler][alloc]") {
  accord::devices::DeviceRegistry registry;
  registry.add(accord::devices::host::make_host_device().value());
  engine::EngineOptions options;
  options.worker_threads = 0;  // inline: the region runs inside wait() on this thread
  auto eng = std::move(engine::Engine::create(options, std::move(registry)).value());
  {
    auto session = eng->open_session({}, "alloc").value();
    auto a = session->allocate(4096, accord::MemoryPlacement::host_visible()).value();
    auto b = session->allocate(4096, accord::MemoryPlacement::host_visible()).value();
    engine::GraphSpec spec;
    spec.ops.push_back(EngineFixture::fill(a));
    spec.ops.push_back(EngineFixture::copy_on(b, a, accord::LaneKind::Compute, 4096));
    auto g = session->prepare(std::move(spec)).value();
    long allocations = 0;
    for (int i = 0; i < 200; ++i) {
      bool ok = false;
      allocations += allocations_during([&] {
        engine::Submission* s = session->submit(*g, {}).value();
        ok = s->wait().ok();
        s->release_observer();
      });
      REQUIRE(ok);
    }
    CHECK(allocations == 0);
    CHECK(session->statistics().completions == 200);
  }
}
