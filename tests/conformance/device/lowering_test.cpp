// Lowering: a run of same-lane operations with the edges between them becomes one native
// region. A run whose edges leave room for parallelism still computes every operation
// with its offsets; an operation on a lane the device lacks is refused, naming the lane.
#include <array>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("a run with a diamond of edges computes every operation", "[lowering][launch]") {
  // 0: fill a   1: fill b   2: c[0,32) <- a[0,32)   3: c[32,64) <- b[32,64)   4: d <- c
  // Edges 0->2, 1->3, 2->4, 3->4: operations 0 and 1 (and 2 and 3) may run at once.
  const auto a = allocate(device, 64);
  const auto b = allocate(device, 64);
  const auto c = allocate(device, 64);
  const auto d = allocate(device, 64);
  const LaneKind lane = work_lane(device);
  const OperationBinding fill_a = bind(*a, Access::Write);
  const OperationBinding fill_b = bind(*b, Access::Write);
  const std::array low{bind(*c, Access::Write, 0, 32), bind(*a, Access::Read, 0, 32)};
  const std::array high{bind(*c, Access::Write, 32, 32), bind(*b, Access::Read, 32, 32)};
  const std::array whole{bind(*d, Access::Write), bind(*c, Access::Read)};
  const std::array operations{fill_op(lane, fill_a, 0x11), fill_op(lane, fill_b, 0x22), copy_op(lane, low),
                              copy_op(lane, high), copy_op(lane, whole)};
  const std::array<OperationEdge, 4> edges{{{0, 2}, {1, 3}, {2, 4}, {3, 4}}};
  const std::unique_ptr<NativeRegion> region = lower(device, operations, edges);

  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  REQUIRE(sink.done() == 1);
  std::vector<std::uint8_t> expected(32, 0x11);
  expected.resize(64, 0x22);
  // The first 64 bytes: a device may grant more than was asked for (2 MiB on a GPU).
  const auto first_64 = [](std::vector<std::uint8_t> bytes) {
    bytes.resize(64);
    return bytes;
  };
  CHECK(first_64(read_back(device, *c)) == expected);
  CHECK(first_64(read_back(device, *d)) == expected);
  CHECK(first_64(read_back(device, *a)) == std::vector<std::uint8_t>(64, 0x11));
}

DEVICE_TEST_CASE("lowering refuses an operation on a lane the device lacks", "[lowering]") {
  std::optional<LaneKind> missing;
  for (LaneKind lane : {LaneKind::Upload, LaneKind::Compute, LaneKind::Download, LaneKind::Npu, LaneKind::Host})
    if (!missing && !has_lane(device, lane)) missing = lane;
  if (!missing) {
    WARN("device " << device.info().id().to_string() << " offers every lane: none to refuse");
    return;
  }
  // A well-formed fill otherwise, so only the lane can be at fault: on the device's own
  // memory where it has some, else on host pages that stand in for it.
  std::unique_ptr<DeviceMemory> own;
  HostMappedDouble stand_in(64);
  if (home_placement(device)) own = allocate(device, 64);
  const OperationBinding binding = bind(own ? *own : static_cast<const DeviceMemory&>(stand_in), Access::Write);
  const Operation op = fill_op(*missing, binding, 1);
  RegionRequest request;
  request.operations = std::span<const Operation>(&op, 1);
  INFO("lowering a fill on the " << to_string(*missing) << " lane");
  CHECK_STATUS(device.lower(request), FailsWith(ErrorKind::Invalid, {std::string(to_string(*missing))}));
}

}  // namespace
}  // namespace accord::devices::conformance
