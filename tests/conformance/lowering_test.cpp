// Prepare lowers a graph into lane regions (ARCHITECTURE.md engine items 3-4): runs of
// consecutive same-lane operations become one region, a lane change starts a new one,
// copy/copy_on pick the lane, and region predecessors follow the data, not the order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;
using Indices = std::vector<std::uint32_t>;
using Regions = std::vector<std::size_t>;

namespace {
Regions sorted_predecessors(const ExecutableGraph& exec, std::size_t region) {
  Regions p = exec.region(region).predecessors;
  std::sort(p.begin(), p.end());
  return p;
}
}  // namespace

TEST_CASE("consecutive same-lane operations become one region", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer b = make_buffer(rt, 64);
  const Buffer c = make_buffer(rt, 64);
  Graph g = rt.graph();
  UNWRAP(g.fill(a.view(), 1));
  UNWRAP(g.fill(b.view(), 2));
  UNWRAP(g.copy(c.view(), a.view()));  // host-visible -> host-visible: Compute
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 1);
  CHECK(exec.region(0).lane == LaneKind::Compute);
  CHECK(region_nodes(exec, 0) == Indices{0, 1, 2});
  CHECK(exec.region(0).predecessors.empty());
  run_once(exec);
  CHECK(read_bytes(c) == repeated(64, 1));
}

TEST_CASE("consecutive host kernels share one Host-lane region", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 3.0f);
  const Buffer x = make_buffer(rt, 16);
  const Buffer y = make_buffer(rt, 16);
  const Buffer z = make_buffer(rt, 16);
  write_floats(x, {1, 2, 3, 4});
  Graph g = rt.graph();
  UNWRAP(g.host(scale, {x.view(), y.view()}));
  UNWRAP(g.host(scale, {y.view(), z.view()}));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 1);
  CHECK(exec.region(0).lane == LaneKind::Host);
  CHECK(region_nodes(exec, 0) == Indices{0, 1});
  run_once(exec);
  CHECK(read_floats(z) == std::vector<float>{9, 18, 27, 36});
}

TEST_CASE("copy_on runs the copy on the lane it names", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const auto lane = GENERATE(GpuLane::Upload, GpuLane::Compute, GpuLane::Download);
  CAPTURE(to_lane_kind(lane));
  const Buffer src = make_buffer(rt, 32);
  const Buffer dst = make_buffer(rt, 32);
  fill_on_host(src, 0x3C);
  Graph g = rt.graph();
  UNWRAP(g.copy_on(dst.view(), src.view(), lane));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 1);
  CHECK(exec.region(0).lane == to_lane_kind(lane));
  run_once(exec);
  CHECK(read_bytes(dst) == repeated(32, 0x3C));
}

TEST_CASE("a copy between host-visible buffers runs on the Compute lane", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer src = make_buffer(rt, 32);
  const Buffer dst = make_buffer(rt, 32);
  Graph g = rt.graph();
  UNWRAP(g.copy(dst.view(), src.view()));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 1);
  CHECK(exec.region(0).lane == LaneKind::Compute);
}

TEST_CASE("a lane change splits regions and predecessors follow the data", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 32);
  const Buffer b = make_buffer(rt, 32);
  const Buffer c = make_buffer(rt, 32);
  Graph g = rt.graph();
  UNWRAP(g.fill(a.view(), 7));                               // region 0: Compute
  UNWRAP(g.copy_on(b.view(), a.view(), GpuLane::Upload));    // region 1: Upload, reads a
  UNWRAP(g.fill(c.view(), 8));                               // region 2: Compute, unrelated
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 3);
  CHECK(exec.region(0).lane == LaneKind::Compute);
  CHECK(exec.region(1).lane == LaneKind::Upload);
  CHECK(exec.region(2).lane == LaneKind::Compute);
  CHECK(region_nodes(exec, 0) == Indices{0});
  CHECK(region_nodes(exec, 1) == Indices{1});
  CHECK(region_nodes(exec, 2) == Indices{2});
  CHECK(exec.region(0).predecessors.empty());
  CHECK(exec.region(1).predecessors == Regions{0});
  CHECK(exec.region(2).predecessors.empty());  // same lane as region 0, but no shared bytes
  run_once(exec);
  CHECK(read_bytes(b) == repeated(32, 7));
  CHECK(read_bytes(c) == repeated(32, 8));
}

TEST_CASE("region predecessors follow a pipeline across lanes", "[conformance][lowering]") {
  // upload -> host kernel -> download, plus an independent upload: four regions.
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 8;
  const Kernel scale = load_scale(rt, kCount, -1.5f);
  const Buffer host_in = make_buffer(rt, kCount * 4);
  const Buffer dev_in = make_buffer(rt, kCount * 4);
  const Buffer dev_out = make_buffer(rt, kCount * 4);
  const Buffer host_out = make_buffer(rt, kCount * 4);
  const Buffer side_src = make_buffer(rt, 16);
  const Buffer side_dst = make_buffer(rt, 16);
  write_floats(host_in, {1, 2, 3, 4, 5, 6, 7, 8});
  fill_on_host(side_src, 0x11);

  Graph g = rt.graph();
  UNWRAP(g.copy_on(dev_in.view(), host_in.view(), GpuLane::Upload));
  UNWRAP(g.host(scale, {dev_in.view(), dev_out.view()}));
  UNWRAP(g.copy_on(host_out.view(), dev_out.view(), GpuLane::Download));
  UNWRAP(g.copy_on(side_dst.view(), side_src.view(), GpuLane::Upload));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 4);
  CHECK(exec.region(0).lane == LaneKind::Upload);
  CHECK(exec.region(1).lane == LaneKind::Host);
  CHECK(exec.region(2).lane == LaneKind::Download);
  CHECK(exec.region(3).lane == LaneKind::Upload);
  CHECK(exec.region(0).predecessors.empty());
  CHECK(exec.region(1).predecessors == Regions{0});
  CHECK(exec.region(2).predecessors == Regions{1});
  CHECK(exec.region(3).predecessors.empty());
  run_once(exec);
  CHECK(read_floats(host_out) == std::vector<float>{-1.5f, -3, -4.5f, -6, -7.5f, -9, -10.5f, -12});
  CHECK(read_bytes(side_dst) == repeated(16, 0x11));
}

TEST_CASE("a write-after-read across lanes makes a region predecessor", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 16);
  const Buffer out = make_buffer(rt, 16);
  fill_on_host(a, 0x21);
  Graph g = rt.graph();
  UNWRAP(g.copy_on(out.view(), a.view(), GpuLane::Download));  // region 0 reads a
  UNWRAP(g.fill(a.view(), 0x22));                              // region 1 overwrites it
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 2);
  CHECK(exec.region(1).predecessors == Regions{0});
  run_once(exec);
  CHECK(read_bytes(out) == repeated(16, 0x21));
  CHECK(read_bytes(a) == repeated(16, 0x22));
}

TEST_CASE("regions partition the nodes in recording order", "[conformance][lowering]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 1.0f);
  std::vector<Buffer> bufs;
  for (int i = 0; i < 6; ++i) bufs.push_back(make_buffer(rt, 16));
  Graph g = rt.graph();
  // Lanes: C C U U H H D C -> regions {0,1} {2,3} {4,5} {6} {7}
  UNWRAP(g.fill(bufs[0].view(), 1));
  UNWRAP(g.fill(bufs[1].view(), 2));
  UNWRAP(g.copy_on(bufs[2].view(), bufs[0].view(), GpuLane::Upload));
  UNWRAP(g.copy_on(bufs[3].view(), bufs[1].view(), GpuLane::Upload));
  UNWRAP(g.host(scale, {bufs[2].view(), bufs[4].view()}));
  UNWRAP(g.host(scale, {bufs[3].view(), bufs[5].view()}));
  UNWRAP(g.copy_on(bufs[0].view(), bufs[4].view(), GpuLane::Download));
  UNWRAP(g.fill(bufs[1].view(), 9));
  const ExecutableGraph exec = prepare(std::move(g));
  REQUIRE(exec.regions() == 5);
  CHECK(region_nodes(exec, 0) == Indices{0, 1});
  CHECK(region_nodes(exec, 1) == Indices{2, 3});
  CHECK(region_nodes(exec, 2) == Indices{4, 5});
  CHECK(region_nodes(exec, 3) == Indices{6});
  CHECK(region_nodes(exec, 4) == Indices{7});
  std::set<std::uint32_t> seen;
  for (std::size_t r = 0; r < exec.regions(); ++r) {
    for (std::uint32_t n : region_nodes(exec, r)) CHECK(seen.insert(n).second);
    for (std::size_t p : exec.region(r).predecessors) CHECK(p < r);
  }
  CHECK(seen.size() == exec.nodes());
  // Region 3 (download into bufs[0]) follows region 0 (last wrote bufs[0]), region 1
  // (read bufs[0] since) and region 2 (wrote bufs[4]); region 4 (fill bufs[1]) follows
  // region 0 (last wrote bufs[1]) and region 1 (read it since).
  CHECK(sorted_predecessors(exec, 3) == Regions{0, 1, 2});
  CHECK(sorted_predecessors(exec, 4) == Regions{0, 1});
}
