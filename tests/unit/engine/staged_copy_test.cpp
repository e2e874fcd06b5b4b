// Copies between two GPUs that cannot reach each other's memory (staged_copy.h): staged
// through host memory the graph owns, as a download on the source's GPU and an upload
// on the destination's, in regions of their own; ordered against everything around
// them, reused safely across submissions, and equal to serial execution on random
// graphs. Runs on the real host device beside two ThreadedDevice GPUs without a peer path.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <random>
#include <thread>

#include "tests/support/device_set_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
namespace engine = accord::engine;

namespace {

DeviceSetOptions two_gpus(bool peers) {
  DeviceSetOptions options;
  options.gpus = 2;
  options.gpu_peers = peers;
  return options;
}

std::vector<std::uint8_t> host_bytes(const engine::Allocation& a) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(a.host_address());
  return {p, p + a.bytes()};
}

// Runs `ops` once and waits; REQUIREs success.
void run(engine::Session& session, std::vector<engine::OperationSpec> ops) {
  auto g = DeviceSetFixture::prepare(session, std::move(ops));
  auto s = session.submit(*g, {}).value();
  const Status status = s->wait();
  INFO(status.to_string());
  REQUIRE(status.ok());
  s->release_observer();
}

engine::OperationSpec copy_range(const engine::Ref<engine::Allocation>& dst, std::size_t dst_offset,
                                 const engine::Ref<engine::Allocation>& src, std::size_t src_offset,
                                 std::size_t length) {
  engine::OperationSpec op;
  op.kind = devices::OpKind::Copy;
  op.bindings.push_back({dst, dst_offset, length});
  op.bindings.push_back({src, src_offset, length});
  return op;
}

engine::OperationSpec fill_range(const engine::Ref<engine::Allocation>& a, std::size_t offset, std::size_t length,
                                 std::uint8_t value) {
  engine::OperationSpec op;
  op.kind = devices::OpKind::Fill;
  op.fill_value = value;
  op.bindings.push_back({a, offset, length});
  return op;
}

}  // namespace

TEST_CASE("a copy between GPUs with no peer path is a download on the source's GPU, then an upload on the destination's",
          "[engine][admission][staged]") {
  DeviceSetFixture f(two_gpus(false));
  auto session = f.open();
  auto a = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto b = session->allocate(64, MemoryPlacement::gpu_local(1)).value();
  auto back = session->allocate(64, MemoryPlacement::host_visible()).value();
  const std::uint64_t live_before = session->statistics().live_bytes;
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(a, 3), DeviceSetFixture::copy(b, a),
                                                DeviceSetFixture::copy(back, b)});
  // gpu:0 is device 1, gpu:1 device 2.
  REQUIRE(g->regions().size() == 4);
  CHECK(g->regions()[0].device == 1);
  CHECK(g->regions()[0].lane == LaneKind::Compute);
  CHECK(g->regions()[1].device == 1);
  CHECK(g->regions()[1].lane == LaneKind::Download);
  CHECK(g->regions()[1].ops == std::vector<std::uint32_t>{1});
  CHECK(g->regions()[1].predecessors == std::vector<std::uint32_t>{0});
  CHECK(g->regions()[2].device == 2);
  CHECK(g->regions()[2].lane == LaneKind::Upload);
  CHECK(g->regions()[2].ops == std::vector<std::uint32_t>{1});
  CHECK(g->regions()[2].predecessors == std::vector<std::uint32_t>{1});
  CHECK(g->regions()[3].device == 2);
  CHECK(g->regions()[3].lane == LaneKind::Download);
  CHECK(g->regions()[3].predecessors == std::vector<std::uint32_t>{2});
  CHECK(g->devices() == std::vector<devices::DeviceIndex>{0, 1, 2});
  // The stage is the session's memory while the graph lives.
  CHECK(session->statistics().live_bytes == live_before + 64);

  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  CHECK(host_bytes(*back) == std::vector<std::uint8_t>(64, 3));
  s->release_observer();
  g.reset();
  // The last reference to the graph may be the scheduler's, dropped just after the wait.
  for (int i = 0; i < 5000 && session->statistics().live_bytes != live_before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(session->statistics().live_bytes == live_before);
}

TEST_CASE("with a peer path the same copy is not staged", "[engine][admission][staged]") {
  DeviceSetFixture f(two_gpus(true));
  auto session = f.open();
  auto a = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto b = session->allocate(64, MemoryPlacement::gpu_local(1)).value();
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::copy(b, a)});
  REQUIRE(g->regions().size() == 1);
  CHECK(g->regions()[0].device == 2);
  CHECK(g->regions()[0].lane == LaneKind::Compute);
}

TEST_CASE("staged copies in both directions stay right over many submissions of one graph",
          "[engine][admission][staged]") {
  DeviceSetFixture f(two_gpus(false));
  engine::SessionLimits limits;
  limits.graph_slots = 64;  // every submission in flight at once, sharing the graph's stage
  auto session = f.open(limits);
  auto on0 = session->allocate(256, MemoryPlacement::gpu_local(0)).value();
  auto on1 = session->allocate(256, MemoryPlacement::gpu_local(1)).value();
  auto plus_one = session->allocate(256, MemoryPlacement::gpu_local(1)).value();
  auto back = session->allocate(256, MemoryPlacement::host_visible()).value();
  auto inc = DeviceSetFixture::increment(*session, DeviceId::gpu(1));
  run(*session, {DeviceSetFixture::fill(on0, 10)});
  // gpu:0 -> gpu:1, +1 on gpu:1, gpu:1 -> gpu:0: each submission adds one to on0.
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::copy(on1, on0),
                                                DeviceSetFixture::kernel(inc, plus_one, on1),
                                                DeviceSetFixture::copy(on0, plus_one)});
  REQUIRE(g->regions().size() == 5);  // download, upload, kernel, download, upload
  constexpr int kRounds = 50;
  std::vector<engine::Submission*> submissions;
  for (int i = 0; i < kRounds; ++i) {
    auto submitted = session->submit(*g, {});
    INFO(submitted.status().to_string());
    REQUIRE(submitted.ok());
    submissions.push_back(submitted.value());
  }
  for (engine::Submission* s : submissions) {
    REQUIRE(s->wait().ok());
    s->release_observer();
  }
  run(*session, {DeviceSetFixture::copy(back, on0)});
  CHECK(host_bytes(*back) == std::vector<std::uint8_t>(256, 10 + kRounds));
}

TEST_CASE("random graphs of fills and copies across the host and two GPUs without peers equal serial execution",
          "[engine][admission][staged][random]") {
  const bool peers = GENERATE(false, true);
  INFO((peers ? "with" : "without") << " a peer path");
  DeviceSetFixture f(two_gpus(peers));
  auto session = f.open();
  constexpr std::size_t kBytes = 48;
  // Two buffers on each of the host, gpu:0 and gpu:1.
  const std::array<MemoryPlacement, 6> placements = {
      MemoryPlacement::host_visible(), MemoryPlacement::host_visible(), MemoryPlacement::gpu_local(0),
      MemoryPlacement::gpu_local(0),   MemoryPlacement::gpu_local(1),   MemoryPlacement::gpu_local(1)};
  std::vector<engine::Ref<engine::Allocation>> buffers;
  std::vector<std::vector<std::uint8_t>> expected(placements.size(), std::vector<std::uint8_t>(kBytes, 0));
  for (const MemoryPlacement& p : placements) buffers.push_back(session->allocate(kBytes, p).value());
  std::vector<engine::OperationSpec> zero;
  for (const auto& b : buffers) zero.push_back(DeviceSetFixture::fill(b, 0));
  run(*session, std::move(zero));

  std::mt19937_64 rng(20261202);
  auto draw = [&](std::size_t lo, std::size_t hi) { return lo + static_cast<std::size_t>(rng() % (hi - lo + 1)); };
  std::size_t staged_regions = 0;
  for (int graph = 0; graph < 150; ++graph) {
    INFO("graph " << graph);
    std::vector<engine::OperationSpec> ops;
    const std::size_t count = draw(1, 10);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t dst = draw(0, buffers.size() - 1);
      const std::size_t length = draw(1, kBytes);
      const std::size_t dst_offset = draw(0, kBytes - length);
      if (draw(0, 2) == 0) {
        const auto value = static_cast<std::uint8_t>(draw(1, 255));
        ops.push_back(fill_range(buffers[dst], dst_offset, length, value));
        std::memset(expected[dst].data() + dst_offset, value, length);
        continue;
      }
      std::size_t src = draw(0, buffers.size() - 2);
      if (src >= dst) ++src;  // another buffer: ranges never overlap
      const std::size_t src_offset = draw(0, kBytes - length);
      ops.push_back(copy_range(buffers[dst], dst_offset, buffers[src], src_offset, length));
      std::memmove(expected[dst].data() + dst_offset, expected[src].data() + src_offset, length);
    }
    auto g = DeviceSetFixture::prepare(*session, std::move(ops));
    for (const engine::PreparedRegion& r : g->regions())
      if (r.device != 0 && (r.lane == LaneKind::Download || r.lane == LaneKind::Upload)) ++staged_regions;
    auto s = session->submit(*g, {}).value();
    const Status status = s->wait();
    INFO(status.to_string());
    REQUIRE(status.ok());
    s->release_observer();
  }
  CHECK(staged_regions > 0);
  auto readback = session->allocate(kBytes, MemoryPlacement::host_visible()).value();
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    INFO("buffer " << b << " on " << placements[b].to_string());
    run(*session, {DeviceSetFixture::copy(readback, buffers[b])});
    CHECK(host_bytes(*readback) == expected[b]);
  }
}
