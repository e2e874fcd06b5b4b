// Launch and completion: a region computes the right values, a failing kernel is
// Execution through on_error, every launch reports exactly one outcome (in any slot, from
// several threads), a synchronous device reports before launch returns, and a
// successful launch allocates nothing. Native waits and shut_down have their own files.
#include <array>
#include <cstring>
#include <thread>

#include "accord/builtin_kernels.h"
#include "tests/conformance/device/device_conformance_helpers.h"

namespace accord::devices::conformance {
namespace {

DEVICE_TEST_CASE("a region of fills, copies and a kernel computes the right values", "[launch][code]") {
  // 0: fill a   1: fill b   2: c <- a   3: out = add_f32(c, b); edges 0->2, 1->3, 2->3.
  constexpr std::uint32_t kCount = 64;
  const builtin::KernelSpec spec = builtin::add_f32(kCount);
  const std::unique_ptr<LoadedCode> add = load(device, device_backend().code.add_f32, "add_f32", spec.contract);
  const auto a = allocate(device, kCount * 4);
  const auto b = allocate(device, kCount * 4);
  const auto c = allocate(device, kCount * 4);
  const auto out = allocate(device, kCount * 4);
  const LaneKind lane = work_lane(device);
  const OperationBinding fill_a = bind(*a, Access::Write, 0, kCount * 4);
  const OperationBinding fill_b = bind(*b, Access::Write, 0, kCount * 4);
  const std::array copy{bind(*c, Access::Write, 0, kCount * 4), bind(*a, Access::Read, 0, kCount * 4)};
  const std::array sum{bind(*c, Access::Read, 0, kCount * 4), bind(*b, Access::Read, 0, kCount * 4),
                       bind(*out, Access::Write, 0, kCount * 4)};
  const std::array operations{fill_op(lane, fill_a, 0x40), fill_op(lane, fill_b, 0x3F), copy_op(lane, copy),
                              kernel_op(lane, *add, sum)};
  const std::array<OperationEdge, 3> edges{{{0, 2}, {1, 3}, {2, 3}}};
  const std::unique_ptr<NativeRegion> region = lower(device, operations, edges);

  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  REQUIRE(sink.done() == 1);
  const std::vector<std::uint8_t> bytes = read_back(device, *out);
  std::vector<float> values(kCount);
  std::memcpy(values.data(), bytes.data(), kCount * sizeof(float));
  const float expected = float_of_bytes(0x40) + float_of_bytes(0x3F);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    INFO("out[" << i << "]");
    REQUIRE(values[i] == expected);
  }
}

DEVICE_TEST_CASE("a failing kernel reports Execution once, and the device keeps working", "[launch][code]") {
  const std::unique_ptr<LoadedCode> fail = load(device, device_backend().code.fail, "fail", one_binding_contract());
  const auto victim = allocate(device, 64);
  const OperationBinding binding = bind(*victim, Access::ReadWrite);
  const Operation op = kernel_op(work_lane(device), *fail, std::span<const OperationBinding>(&binding, 1));
  const std::unique_ptr<NativeRegion> failing = lower(device, std::span<const Operation>(&op, 1));
  RecordingSink sink;
  launch_and_wait(device, *failing, sink);
  CHECK(sink.errors() == 1);
  CHECK(sink.done() == 0);
  CHECK(sink.cancelled() == 0);
  CHECK_STATUS(sink.last_error(), FailsWith(ErrorKind::Execution, {fail->name()}));

  // A failing kernel is not a lost device: the next region runs.
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> healthy = simple_region(device, scratch);
  RecordingSink after;
  launch_and_wait(device, *healthy, after);
  CHECK(after.done() == 1);

  device.shut_down();  // no report can follow, so the counts below are final
  CHECK(sink.calls() == 1);
  CHECK(after.calls() == 1);
}

DEVICE_TEST_CASE("every launch reports exactly one outcome", "[launch]") {
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> region = simple_region(device, scratch);
  RecordingSink sink;  // reused: a sink may be reused once its call has returned
  for (int i = 1; i <= 3; ++i) {
    device.launch(*region, RegionWaits{0, {}}, sink);
    INFO("launch " << i);
    REQUIRE(sink.wait_for(i));
  }
  device.shut_down();  // no report can follow, so the counts below are final
  CHECK(sink.done() == 3);
  CHECK(sink.errors() == 0);
  CHECK(sink.cancelled() == 0);
}

DEVICE_TEST_CASE("a synchronous device reports before launch returns, on the calling thread", "[launch]") {
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> region = simple_region(device, scratch);
  RecordingSink sink;
  device.launch(*region, RegionWaits{0, {}}, sink);
  if (device.launches_synchronously()) {
    CHECK(sink.calls() == 1);
    CHECK(sink.last_thread() == std::this_thread::get_id());
  }
  REQUIRE(sink.wait_for(1));
  CHECK(sink.done() == 1);
}

DEVICE_TEST_CASE("a region lowered for several slots launches in each of them", "[launch][slots]") {
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> region = simple_region(device, scratch, 3);
  for (std::uint32_t slot = 0; slot < 3; ++slot) {
    INFO("slot " << slot);
    RecordingSink sink;
    launch_and_wait(device, *region, sink, slot);
    CHECK(sink.done() == 1);
  }
}

DEVICE_TEST_CASE("regions launched from several threads each report once", "[launch][threads]") {
  constexpr int kThreads = 4;
  constexpr int kLaunches = 50;
  std::array<std::unique_ptr<DeviceMemory>, kThreads> scratch;
  std::array<std::unique_ptr<NativeRegion>, kThreads> regions;
  for (int t = 0; t < kThreads; ++t) regions[t] = simple_region(device, scratch[t]);
  std::array<RecordingSink, kThreads> sinks;
  std::array<bool, kThreads> completed{};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      bool ok = true;
      for (int i = 1; i <= kLaunches && ok; ++i) {
        device.launch(*regions[t], RegionWaits{0, {}}, sinks[t]);
        ok = sinks[t].wait_for(i);
      }
      completed[t] = ok;
    });
  }
  for (std::thread& thread : threads) thread.join();
  device.shut_down();  // no report can follow, so the counts below are final
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(completed[t]);
    CHECK(sinks[t].done() == kLaunches);
    CHECK(sinks[t].calls() == kLaunches);
  }
}

DEVICE_TEST_CASE("a successful launch allocates nothing on the calling thread", "[launch]") {
  std::unique_ptr<DeviceMemory> scratch;
  const std::unique_ptr<NativeRegion> region = simple_region(device, scratch);
  RecordingSink sink;
  std::uint64_t allocations = 0;
  {
    const AllocationCounter counter;  // the first launch counts too: no lazy set-up
    device.launch(*region, RegionWaits{0, {}}, sink);
    allocations = counter.count();
  }
  REQUIRE(sink.wait_for(1));
  CHECK(sink.done() == 1);
  CHECK(allocations == 0);
}

}  // namespace
}  // namespace accord::devices::conformance
