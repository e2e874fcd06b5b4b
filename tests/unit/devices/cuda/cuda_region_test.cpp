// Regions as CUDA graphs on a real GPU (cuda_region.cpp, cuda_device.cpp launch,
// cuda_completion.cpp): edges honoured without false chaining, fill and copy nodes,
// reports from the device's completion thread, slots, native waits between regions.
// Tagged [gpu].
#include <array>
#include <chrono>
#include <cstring>

#include "daemon/devices/cuda/cuda_region.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using namespace testing;

constexpr std::uint32_t kMarker = 0x5EE9D0E5u;

KernelContract store_contract(std::uint32_t value, std::uint32_t microseconds) {
  KernelContract c;
  c.bindings = {{4, 4, Access::Write, "out u32"}};
  append_constant(c.constants, value);
  append_constant(c.constants, microseconds);
  return c;
}

KernelContract sum3_contract() {
  KernelContract c;
  c.bindings = {{4, 4, Access::Read, "a"}, {4, 4, Access::Read, "b"}, {4, 4, Access::Read, "c"}, {4, 4, Access::Write, "out"}};
  return c;
}

std::uint32_t u32_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

std::unique_ptr<LoadedCode> load_or_fail(CudaDevice& device, const CodeImage& image, const KernelContract& contract) {
  auto code = device.load(image, contract);
  INFO("load " << image.name << ": " << code.status().to_string());
  REQUIRE(code.ok());
  return std::move(code).value();
}

TEST_CASE("three independent kernels and one dependent run as a graph with only the given edges",
          "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  // Each store sleeps 100 ms. Chained they would take 300 ms; as the three independent
  // nodes they are, about 100 ms. The sum depends on all three through its edges.
  constexpr std::uint32_t kSleepUs = 100'000;
  const auto store1 = load_or_fail(device, gpu_image(ptx, "accord_test_store_u32"), store_contract(1, kSleepUs));
  const auto store2 = load_or_fail(device, gpu_image(ptx, "accord_test_store_u32"), store_contract(2, kSleepUs));
  const auto store4 = load_or_fail(device, gpu_image(ptx, "accord_test_store_u32"), store_contract(4, kSleepUs));
  const auto sum = load_or_fail(device, gpu_image(ptx, "accord_test_sum3_u32"), sum3_contract());
  auto memory = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const DeviceMemory& m = *memory.value();
  const std::array b1{bind(m, Access::Write, 0, 4)};
  const std::array b2{bind(m, Access::Write, 4, 4)};
  const std::array b4{bind(m, Access::Write, 8, 4)};
  const std::array bs{bind(m, Access::Read, 0, 4), bind(m, Access::Read, 4, 4), bind(m, Access::Read, 8, 4),
                      bind(m, Access::Write, 12, 4)};
  const std::array ops{kernel_op(LaneKind::Compute, *store1, b1), kernel_op(LaneKind::Compute, *store2, b2),
                       kernel_op(LaneKind::Compute, *store4, b4), kernel_op(LaneKind::Compute, *sum, bs)};
  const std::array edges{OperationEdge{0, 3}, OperationEdge{1, 3}, OperationEdge{2, 3}};
  const auto region = lower(device, ops, edges);
  RecordingSink sink;
  const auto start = std::chrono::steady_clock::now();
  launch_and_wait(device, *region, sink);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  INFO(sink.last_error().to_string());
  REQUIRE(sink.done() == 1);
  const std::vector<std::uint8_t> back = read_back(device, m);
  CHECK(u32_at(back, 0) == 1);
  CHECK(u32_at(back, 4) == 2);
  CHECK(u32_at(back, 8) == 4);
  CHECK(u32_at(back, 12) == 7);  // the dependent kernel saw all three
  INFO("the region took " << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms");
  CHECK(elapsed < std::chrono::milliseconds(250));  // not chained (300 ms)
}

TEST_CASE("fill and copy nodes move bytes between GPU memory and host pages", "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  auto memory = device.allocate({4096, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const DeviceMemory& gpu = *memory.value();
  HostPages pages(4096);
  auto admission = device.admit(pages, host_info());
  REQUIRE(admission.ok());
  std::memset(pages.host_address(), 0x11, 4096);
  // fill gpu[0, 1024) with 0xAB; copy host[1024, 2048) -> gpu[1024, 2048); then copy
  // gpu[0, 2048) -> host[2048, 4096). Edges: both writers before the download.
  const OperationBinding fill_binding = bind(gpu, Access::Write, 0, 1024);
  const std::array upload{bind(gpu, Access::Write, 1024, 1024),
                          bind_admitted(pages, *admission.value(), Access::Read, 1024, 1024)};
  const std::array download{bind_admitted(pages, *admission.value(), Access::Write, 2048, 2048),
                            bind(gpu, Access::Read, 0, 2048)};
  const std::array ops{fill_op(LaneKind::Compute, fill_binding, 0xAB), copy_op(LaneKind::Compute, upload),
                       copy_op(LaneKind::Compute, download)};
  const std::array edges{OperationEdge{0, 2}, OperationEdge{1, 2}};
  const auto region = lower(device, ops, edges);
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  INFO(sink.last_error().to_string());
  REQUIRE(sink.done() == 1);
  const auto* p = pages.as<const std::uint8_t>();
  CHECK(p[2048] == 0xAB);
  CHECK(p[2048 + 1023] == 0xAB);
  CHECK(p[2048 + 1024] == 0x11);
  CHECK(p[4095] == 0x11);
  CHECK(p[0] == 0x11);
}

TEST_CASE("a region reports from the device's completion thread, once per launch, in every slot",
          "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  auto memory = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const OperationBinding binding = bind(*memory.value(), Access::Write);
  const Operation fill = fill_op(LaneKind::Compute, binding, 1);
  const auto region = lower(device, std::span<const Operation>(&fill, 1), {}, 3);
  RecordingSink sink;
  for (std::uint32_t slot = 0; slot < 3; ++slot) launch_and_wait(device, *region, sink, slot);
  CHECK(sink.done() == 3);
  CHECK(sink.calls() == 3);
  CHECK(sink.last_thread() != std::this_thread::get_id());
}

TEST_CASE("an empty run lowers and completes", "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  const auto region = lower(device, {});
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  CHECK(sink.done() == 1);
}

// Run with each flag writer (cuda.flag_write): the successor's stream waits on the flag
// the predecessor's tail writes, whichever node writes it.
void check_successor_waits(CudaFlagWriter writer) {
  CudaDeviceOptions options;
  options.flag_write = writer;
  // Only a flag reports a launch here: no stream query stands in for one that is late.
  options.poll.event_check = std::chrono::seconds(60);
  ACCORD_CUDA_TEST_GPU_WITH(device, options);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  if (early_kernel_unavailable(device, writer)) return;
  REQUIRE(device.flag_writer() == writer);
  KernelContract sleep;
  sleep.bindings = {{4, 4, Access::ReadWrite, "marker"}};
  append_constant(sleep.constants, std::uint32_t{100'000});
  const auto sleeper = load_or_fail(device, gpu_image(ptx, "accord_test_sleep_us"), sleep);
  auto marker = device.allocate({64, MemoryPlacement::gpu_local(0)});
  auto out = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(marker.ok());
  REQUIRE(out.ok());
  const std::array sleep_binding{bind(*marker.value(), Access::ReadWrite, 0, 4)};
  const Operation sleep_op = kernel_op(LaneKind::Compute, *sleeper, sleep_binding);
  const std::array copy_bindings{bind(*out.value(), Access::Write, 0, 4), bind(*marker.value(), Access::Read, 0, 4)};
  const Operation copy = copy_op(LaneKind::Download, copy_bindings);
  // Two slots each, launched in the second: its flag is the one the tail was pointed at.
  const auto predecessor = lower(device, std::span<const Operation>(&sleep_op, 1), {}, 2);
  const auto successor = lower(device, std::span<const Operation>(&copy, 1), {}, 2);
  REQUIRE(static_cast<const CudaRegion&>(*predecessor).successors_wait_on_flag());
  // The kernel's region ends as asked; the copy's by the memory operation (no SM needed).
  CHECK(static_cast<const CudaRegion&>(*predecessor).tail_writer() == writer);
  CHECK(static_cast<const CudaRegion&>(*successor).tail_writer() == CudaFlagWriter::MemoryOp);
  RecordingSink first;
  RecordingSink second;
  const std::array waits{RegionWait{predecessor.get(), 1}};
  device.launch(*predecessor, RegionWaits{1, {}}, first);
  device.launch(*successor, RegionWaits{1, waits}, second);
  REQUIRE(first.wait_for(1));
  REQUIRE(second.wait_for(1));
  CHECK(first.done() == 1);
  CHECK(second.done() == 1);
  CHECK(first.last_order() < second.last_order());
  CHECK(u32_at(read_back(device, *out.value()), 0) == kMarker);
}

TEST_CASE("a launch waits natively for a running predecessor and reports after it", "[cuda][gpu][region][waits]") {
  SECTION("the flag kernel writes the predecessor's flag") { check_successor_waits(CudaFlagWriter::Kernel); }
  // The default. Launched while the 100 ms kernel runs, it must wait on the GPU for the
  // kernel's end.
  SECTION("the early flag kernel writes it") { check_successor_waits(CudaFlagWriter::EarlyKernel); }
  SECTION("a memory operation writes it") { check_successor_waits(CudaFlagWriter::MemoryOp); }
}

TEST_CASE("a launch takes an idle stream of its lane, not the next in turn behind unrelated work",
          "[cuda][gpu][region][streams]") {
  // Sessions share a device's stream pools, so a launch that took the next stream in turn
  // would wait behind whatever runs there. Region A waits (up to 2 s) for a flag that only
  // region S sets. Between them, 63 short fills, each waited for: with the streams taken
  // in turn, S would land on A's stream in any pool of 1 to 64 streams (a power of two)
  // and A would time out.
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  KernelContract await;
  await.bindings = {{4, 4, Access::Read, "flag"}, {4, 4, Access::Write, "out"}};
  append_constant(await.constants, std::uint32_t{2'000'000});
  const auto waiter = load_or_fail(device, gpu_image(ptx, "accord_test_await_u32"), await);
  const auto setter = load_or_fail(device, gpu_image(ptx, "accord_test_store_u32"), store_contract(1, 0));
  auto memory = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const DeviceMemory& m = *memory.value();
  const std::array await_bindings{bind(m, Access::Read, 0, 4), bind(m, Access::Write, 4, 4)};
  const std::array set_binding{bind(m, Access::Write, 0, 4)};
  const Operation await_op = kernel_op(LaneKind::Compute, *waiter, await_bindings);
  const Operation set_op = kernel_op(LaneKind::Compute, *setter, set_binding);
  const OperationBinding filled = bind(m, Access::Write, 8, 4);  // outlives filler_op's span
  const Operation filler_op = fill_op(LaneKind::Compute, filled, 7);
  const auto awaiting = lower(device, std::span<const Operation>(&await_op, 1));
  const auto setting = lower(device, std::span<const Operation>(&set_op, 1));
  const auto filling = lower(device, std::span<const Operation>(&filler_op, 1));
  RecordingSink first;
  RecordingSink fills;
  RecordingSink last;
  device.launch(*awaiting, RegionWaits{0, {}}, first);
  for (int i = 0; i < 63; ++i) launch_and_wait(device, *filling, fills);
  device.launch(*setting, RegionWaits{0, {}}, last);
  REQUIRE(first.wait_for(1));
  REQUIRE(last.wait_for(1));
  CHECK(first.done() == 1);
  CHECK(last.done() == 1);
  CHECK(fills.done() == 63);
  INFO("1: the waiting kernel saw the flag; 2: it timed out, S ran behind it on its stream");
  CHECK(u32_at(read_back(device, m), 4) == 1);
}

TEST_CASE("lowering refuses a lane the GPU lacks and a backward edge", "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  auto memory = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const OperationBinding binding = bind(*memory.value(), Access::Write);
  RegionRequest request;
  const Operation host_fill = fill_op(LaneKind::Host, binding, 1);
  request.operations = std::span<const Operation>(&host_fill, 1);
  auto refused = device.lower(request);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Invalid);
  CHECK(std::string(refused.status().message()).find("host") != std::string::npos);
  const std::array ops{fill_op(LaneKind::Compute, binding, 1), fill_op(LaneKind::Compute, binding, 2)};
  const std::array backward{OperationEdge{1, 1}};
  request.operations = ops;
  request.edges = backward;
  refused = device.lower(request);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Invalid);
}

TEST_CASE("shut_down stops reporting and is harmless twice", "[cuda][gpu][region]") {
  ACCORD_CUDA_TEST_GPU(device);
  const auto region = lower(device, {});
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  device.shut_down();
  device.shut_down();
  CHECK(sink.calls() == 1);
}

}  // namespace
}  // namespace accord::devices::cuda
