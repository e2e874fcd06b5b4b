// Memory homes and admissions at prepare (lowering.cpp, allocation.cpp): which device
// runs a fill, a copy or a kernel, that every binding must be visible to it, budgets
// charged at the granted size, kernels loaded on a named device, NPU operations in
// regions of their own, and the edges a device is given. Runs on the real host device
// beside ThreadedDevice accelerators; scheduling itself is in native_waits_test.cpp.
#include <catch2/catch.hpp>

#include <cstring>

#include "accord/builtin_kernels.h"
#include "tests/support/device_set_fixture.h"

using namespace accord;
using accord::testing::DeviceSetFixture;
using accord::testing::DeviceSetOptions;
namespace engine = accord::engine;

namespace {

std::vector<std::uint8_t> host_bytes(const engine::Allocation& a) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(a.host_address());
  return {p, p + a.bytes()};
}

}  // namespace

TEST_CASE("an upload from HostVisible memory into GPU memory and a GPU kernel reading HostVisible memory are accepted and ordered",
          "[engine][admission]") {
  DeviceSetFixture f;
  auto session = f.open();
  auto host_in = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto host_out = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto gpu_buf = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto inc = DeviceSetFixture::increment(*session, DeviceId::gpu(0));
  REQUIRE(gpu_buf->home() == 1);
  REQUIRE(inc->device_index() == 1);

  auto g = DeviceSetFixture::prepare(*session, {
      DeviceSetFixture::fill(host_in, 7),                 // host, Compute lane
      DeviceSetFixture::copy(gpu_buf, host_in),           // GPU, Upload lane
      DeviceSetFixture::kernel(inc, host_out, gpu_buf),   // GPU Compute: reads GPU memory, writes HostVisible
  });
  REQUIRE(g->regions().size() == 3);
  CHECK(g->regions()[0].device == 0);
  CHECK(g->regions()[1].device == 1);
  CHECK(g->regions()[1].lane == LaneKind::Upload);
  CHECK(g->regions()[2].device == 1);
  CHECK(g->regions()[2].lane == LaneKind::Compute);
  CHECK(g->regions()[2].predecessors == std::vector<std::uint32_t>{1});
  CHECK(g->devices() == std::vector<devices::DeviceIndex>{0, 1});
  CHECK(f.gpu().admissions() == 2);  // host_in for the upload, host_out for the kernel

  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  CHECK(host_bytes(*host_out) == std::vector<std::uint8_t>(64, 8));
  s->release_observer();
}

TEST_CASE("a kernel reading HostVisible memory directly sees the host's bytes", "[engine][admission]") {
  DeviceSetFixture f;
  auto session = f.open();
  auto in = session->allocate(32, MemoryPlacement::host_visible()).value();
  auto out = session->allocate(32, MemoryPlacement::gpu_local(0)).value();
  auto back = session->allocate(32, MemoryPlacement::host_visible()).value();
  auto inc = DeviceSetFixture::increment(*session, DeviceId::gpu(0));
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(in, 41), DeviceSetFixture::kernel(inc, out, in),
                                                DeviceSetFixture::copy(back, out)});
  REQUIRE(g->regions().size() == 3);
  CHECK(g->regions()[2].lane == LaneKind::Download);
  CHECK(g->regions()[2].device == 1);
  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  CHECK(host_bytes(*back) == std::vector<std::uint8_t>(32, 42));
  s->release_observer();
}

TEST_CASE("a binding to memory the lane's device cannot reach is Invalid naming the binding and both devices",
          "[engine][admission]") {
  DeviceSetFixture f;
  auto session = f.open();
  auto gpu_buf = session->allocate(16, MemoryPlacement::gpu_local(0)).value();
  auto host_buf = session->allocate(16, MemoryPlacement::host_visible()).value();
  const builtin::KernelSpec relu_spec = builtin::relu_f32(4);
  auto relu = session->load_kernel({devices::CodeImage::Kind::Builtin, relu_spec.name, ""}, relu_spec.contract).value();
  engine::OperationSpec op;
  op.kind = devices::OpKind::Kernel;
  op.kernel = relu;
  op.bindings.push_back({gpu_buf, 0, 16});   // in: GPU memory, for a host kernel
  op.bindings.push_back({host_buf, 0, 16});  // out
  engine::GraphSpec spec;
  spec.ops = {DeviceSetFixture::fill(host_buf, 0), op};
  auto g = session->prepare(std::move(spec));
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().kind() == ErrorKind::Invalid);
  const std::string message(g.status().message());
  INFO(message);
  CHECK(message.find("graph node 1 binding 0") != std::string::npos);
  CHECK(message.find("gpu:0") != std::string::npos);
  CHECK(message.find("host") != std::string::npos);
  CHECK(message.find("not visible") != std::string::npos);
}

TEST_CASE("memory of one GPU is admitted to another that can reach it, and copies run on the destination's device",
          "[engine][admission]") {
  DeviceSetOptions options;
  options.gpus = 2;
  DeviceSetFixture f(options);
  auto session = f.open();
  auto a = session->allocate(64, MemoryPlacement::gpu_local(0)).value();
  auto b = session->allocate(64, MemoryPlacement::gpu_local(1)).value();
  auto back = session->allocate(64, MemoryPlacement::host_visible()).value();
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(a, 3), DeviceSetFixture::copy(b, a),
                                                DeviceSetFixture::copy(back, b)});
  REQUIRE(g->regions().size() == 3);
  CHECK(g->regions()[0].device == 1);
  CHECK(g->regions()[1].device == 2);
  CHECK(g->regions()[1].lane == LaneKind::Compute);
  CHECK(g->regions()[2].device == 2);
  CHECK(g->regions()[2].lane == LaneKind::Download);
  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  CHECK(host_bytes(*back) == std::vector<std::uint8_t>(64, 3));
  s->release_observer();
}

TEST_CASE("budgets are charged the bytes the device granted", "[engine][admission]") {
  DeviceSetOptions options;
  options.gpu_granularity = 2u << 20;
  DeviceSetFixture f(options);
  engine::SessionLimits limits;
  limits.memory_budget = 5u << 20;
  auto session = f.open(limits);
  auto first = session->allocate(100, MemoryPlacement::gpu_local(0)).value();
  CHECK(first->bytes() == 100);
  CHECK(first->charged_bytes() == 2u << 20);
  CHECK(session->statistics().live_bytes == 2u << 20);
  auto second = session->allocate(1, MemoryPlacement::gpu_local(0)).value();
  // 4 MiB charged; a third 2 MiB grant would pass the 5 MiB budget though 1 byte fits.
  auto third = session->allocate(1, MemoryPlacement::gpu_local(0));
  REQUIRE_FALSE(third.ok());
  CHECK(third.status().kind() == ErrorKind::Busy);
  second.reset();
  CHECK(session->allocate(1, MemoryPlacement::gpu_local(0)).ok());
  first.reset();
  CHECK(session->statistics().live_bytes == 0);
}

TEST_CASE("kernels load on the device they name and run on its lane for their kind", "[engine][admission]") {
  DeviceSetOptions options;
  options.npu = true;
  DeviceSetFixture f(options);
  auto session = f.open();
  auto on_gpu = DeviceSetFixture::increment(*session, DeviceId::gpu(0));
  auto on_npu = DeviceSetFixture::increment(*session, DeviceId::npu(0));
  CHECK(on_gpu->device_index() == 1);
  CHECK(on_npu->device_index() == 2);

  devices::CodeImage missing;
  missing.name = "test.increment";
  missing.device = DeviceId::gpu(7);
  auto refused = session->load_kernel(missing, on_gpu->code().contract());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(refused.status().message()).find("gpu:7") != std::string::npos);

  // Two NPU programs in a row are two regions (a command list each); GPU kernels in a
  // row share one region.
  auto s1 = session->allocate(16, MemoryPlacement::shared(0)).value();
  auto s2 = session->allocate(16, MemoryPlacement::shared(0)).value();
  auto s3 = session->allocate(16, MemoryPlacement::shared(0)).value();
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(s1, 1), DeviceSetFixture::kernel(on_npu, s2, s1),
                                                DeviceSetFixture::kernel(on_npu, s3, s2),
                                                DeviceSetFixture::kernel(on_gpu, s1, s3),
                                                DeviceSetFixture::kernel(on_gpu, s2, s1)});
  REQUIRE(g->regions().size() == 4);
  CHECK(g->regions()[0].device == 0);  // a fill of host-mapped Shared memory runs on the host
  CHECK(g->regions()[1].lane == LaneKind::Npu);
  CHECK(g->regions()[2].lane == LaneKind::Npu);
  CHECK(g->regions()[1].ops.size() == 1);
  CHECK(g->regions()[3].lane == LaneKind::Compute);
  CHECK(g->regions()[3].ops.size() == 2);
  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  // s1 = 1; s2 = 2; s3 = 3; s1 = 4; s2 = 5.
  CHECK(host_bytes(*s2) == std::vector<std::uint8_t>(16, 5));
  s->release_observer();
}

TEST_CASE("lower() is given the inferred edges between the operations of its run, not a chain",
          "[engine][admission]") {
  DeviceSetFixture f;
  auto session = f.open();
  auto a = session->allocate(16, MemoryPlacement::gpu_local(0)).value();
  auto b = session->allocate(16, MemoryPlacement::gpu_local(0)).value();
  auto c = session->allocate(16, MemoryPlacement::gpu_local(0)).value();
  auto inc = DeviceSetFixture::increment(*session, DeviceId::gpu(0));
  // fill a; fill b (independent); c = a + 1 (after op 0); a = b + 1 (after 1, and
  // after 2 for the write-after-read on a).
  auto g = DeviceSetFixture::prepare(*session, {DeviceSetFixture::fill(a, 1), DeviceSetFixture::fill(b, 2),
                                                DeviceSetFixture::kernel(inc, c, a), DeviceSetFixture::kernel(inc, a, b)});
  REQUIRE(g->regions().size() == 1);
  auto s = session->submit(*g, {}).value();
  REQUIRE(s->wait().ok());
  s->release_observer();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (const devices::OperationEdge& e : f.gpu().edges_of(testing::ThreadedDevice::tag(*g->regions()[0].native)))
    edges.emplace_back(e.before, e.after);
  // Sorted by the later operation; fill b (1) and fill a (0) are independent, so a
  // backend can run them in parallel.
  CHECK(edges == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 2}, {0, 3}, {1, 3}, {2, 3}});
}
