// Many regions completed from device threads while sessions close and the engine shuts
// down in the middle (scheduler_completion.cpp, engine.cpp): built for ThreadSanitizer,
// where a completion that touched the scheduler after shutdown, or a listener told
// under a lock its remover holds, shows up as a report. Every result that is reported
// successful is checked.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "tests/support/device_set_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
namespace engine = accord::engine;

TEST_CASE("10,000 regions from device threads with sessions closing and shutdown in the middle",
          "[engine][device-threads][slow]") {
  constexpr int kThreads = 4;
  constexpr int kRounds = 900;  // 4 regions each: 4 x 900 x 4 > 10,000 regions before shutdown
  std::atomic<std::uint64_t> regions{0}, verified{0};
  {
    DeviceSetOptions options;
    options.workers = 2;
    options.gpus = 2;
    DeviceSetFixture f(options);
    std::vector<std::thread> tenants;
    for (int t = 0; t < kThreads; ++t) {
      tenants.emplace_back([&, t] {
        auto session = f.open();
        const DeviceId gpu = DeviceId::gpu(t % 2);
        auto in = session->allocate(128, MemoryPlacement::host_visible()).value();
        auto staged = session->allocate(128, MemoryPlacement::gpu_local(gpu.ordinal)).value();
        auto bumped = session->allocate(128, MemoryPlacement::gpu_local(gpu.ordinal)).value();
        auto out = session->allocate(128, MemoryPlacement::host_visible()).value();
        auto inc = DeviceSetFixture::increment(*session, gpu);
        std::vector<engine::Ref<engine::PreparedGraph>> graphs;
        for (int v = 0; v < 4; ++v)
          graphs.push_back(DeviceSetFixture::prepare(
              *session, {DeviceSetFixture::fill(in, static_cast<std::uint8_t>(10 * t + v)),
                         DeviceSetFixture::copy(staged, in), DeviceSetFixture::kernel(inc, bumped, staged),
                         DeviceSetFixture::copy(out, bumped)}));
        for (int round = 0; round < kRounds; ++round) {
          const int v = round % 4;
          auto s = session->submit(*graphs[static_cast<std::size_t>(v)], {});
          if (!s.ok()) continue;  // Busy is allowed; nothing else happens here
          if (s.value()->wait().ok()) {
            regions += 4;
            if (static_cast<std::uint8_t>(out->host_address()[127]) == 10 * t + v + 1) ++verified;
          }
          s.value()->release_observer();
        }
        // Close the session with work in flight: submit and drop every handle at once.
        for (auto& g : graphs) {
          auto s = session->submit(*g, {});
          if (s.ok()) s.value()->release_observer();
        }
      });
    }
    for (auto& t : tenants) t.join();
    // More work in flight from a fresh session, then the engine goes away under it.
    auto last = f.open();
    auto buf = last->allocate(64, MemoryPlacement::gpu_local(0)).value();
    auto g = DeviceSetFixture::prepare(*last, {DeviceSetFixture::fill(buf, 1), DeviceSetFixture::fill(buf, 2)});
    for (int i = 0; i < 8; ++i) {
      auto s = last->submit(*g, {});
      if (s.ok()) s.value()->release_observer();
    }
  }  // ~DeviceSetFixture: shutdown drains what is left, then stops the devices
  CHECK(regions.load() >= 10'000);
  CHECK(verified.load() * 4 == regions.load());
}
