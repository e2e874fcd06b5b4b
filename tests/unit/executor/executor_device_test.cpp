// ExecutorDevice against a live fake_gpu_executor, while nothing goes wrong: identity
// from the hello, memory and admission across the process boundary, regions computing
// the right values, native waits, and many launches each reported exactly once.
// executor_supervision_test.cpp covers deaths, faults and restarts.
#include <unistd.h>

#include <numeric>

#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {
namespace {

using devices::OpKind;

std::uint32_t* words(const devices::common::MemfdPages& pages) {
  return reinterpret_cast<std::uint32_t*>(pages.host_address());
}

std::unique_ptr<devices::common::MemfdPages> host_pages(std::size_t bytes) {
  auto pages = devices::common::MemfdPages::create(bytes);
  REQUIRE(pages.ok());
  return std::move(pages).value();
}

}  // namespace

TEST_CASE("an executor says hello with its GPU's identity", "[executor]") {
  auto device = open_fake(fake_options(1));
  const devices::DeviceInfo& info = device->info();
  CHECK(info.kind == DeviceKind::Gpu);
  CHECK(info.ordinal == 1);
  CHECK(info.backend == "fake");
  CHECK(info.name == "fake:1 (Fake GPU)");
  CHECK(info.target == "fake_sm");
  CHECK(info.uuid == "GPU-fake-1");
  CHECK(info.memory_bytes == (std::uint64_t{1} << 30));
  CHECK(device->lanes().size() == 3);
  CHECK(device->supports(MemoryPlacement::gpu_local(1)));
  CHECK_FALSE(device->supports(MemoryPlacement::gpu_local(0)));
  CHECK_FALSE(device->supports(MemoryPlacement::host_visible()));
  CHECK(device->waits_natively());
  CHECK_FALSE(device->launches_synchronously());
  CHECK(device->completes_by_polling());
  CHECK(device->free_memory() == (std::uint64_t{1} << 29));
  CHECK(device->executor_pid() > 0);
  CHECK(device->executor_pid() != ::getpid());
  CHECK(device->generation() == 1);
}

TEST_CASE("an ordinal past the last GPU opens nothing, and a failing backend gives its own reason", "[executor]") {
  auto none = executor::ExecutorDevice::open(fake_options(2));  // fake.devices defaults to 2
  REQUIRE(none.ok());
  CHECK(*none == nullptr);

  executor::ExecutorOptions options = fake_options();
  options.device_options["fake.fail"] = "fake: no driver: libfake.so.1 not found";
  options.device_options["other.key"] = "not forwarded";
  auto failed = executor::ExecutorDevice::open(options);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().kind() == ErrorKind::Unsupported);
  CHECK(failed.status().message() == "fake: no driver: libfake.so.1 not found");
}

TEST_CASE("allocate, admit, load, lower and launch compute the right values", "[executor]") {
  auto device = open_fake();
  constexpr std::size_t kBytes = 4096;
  auto a = device->allocate({kBytes, MemoryPlacement::gpu_local(0)});
  auto b = device->allocate({kBytes, MemoryPlacement::gpu_local(0)});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)->bytes() >= kBytes);
  CHECK((*a)->host_address() == nullptr);
  CHECK((*a)->device_address() != 0);
  CHECK((*a)->export_fd() >= 0);  // the executor's export travelled here

  auto in = host_pages(kBytes);
  auto out = host_pages(kBytes);
  std::iota(words(*in), words(*in) + kBytes / 4, 0u);
  auto in_view = device->admit(*in, host_info());
  auto out_view = device->admit(*out, host_info());
  REQUIRE(in_view.ok());
  REQUIRE(out_view.ok());
  CHECK((*in_view)->device_address() != 0);

  auto add_one = load_kernel(*device, "fake.add_one", 2);
  CHECK(add_one->name() == "fake.add_one");

  // copy A <- in; B = A + 1; copy out <- B, chained.
  const devices::OperationBinding upload[2] = {bind(**a, kBytes, Access::Write),
                                               bind(*in, kBytes, Access::Read, in_view->get())};
  const devices::OperationBinding kernel[2] = {bind(**b, kBytes, Access::Write), bind(**a, kBytes, Access::Read)};
  const devices::OperationBinding download[2] = {bind(*out, kBytes, Access::Write, out_view->get()),
                                                 bind(**b, kBytes, Access::Read)};
  devices::Operation ops[3];
  ops[0].kind = OpKind::Copy;
  ops[0].lane = LaneKind::Compute;
  ops[0].bindings = upload;
  ops[1].kind = OpKind::Kernel;
  ops[1].lane = LaneKind::Compute;
  ops[1].code = add_one.get();
  ops[1].bindings = kernel;
  ops[2].kind = OpKind::Copy;
  ops[2].lane = LaneKind::Compute;
  ops[2].bindings = download;
  const devices::OperationEdge edges[2] = {{0, 1}, {1, 2}};
  devices::RegionRequest request = devices::RegionRequest::of(ops);
  request.edges = edges;
  auto region = device->lower(request);
  INFO(region.status().to_string());
  REQUIRE(region.ok());

  for (int round = 0; round < 3; ++round) {
    RecordingSink sink;
    device->launch(**region, {}, sink);
    REQUIRE(sink.wait());
    CHECK(sink.done());
    CHECK(sink.reports() == 1);
    for (std::uint32_t i = 0; i < kBytes / 4; ++i) REQUIRE(words(*out)[i] == i + 1 + static_cast<std::uint32_t>(round));
    std::copy(words(*out), words(*out) + kBytes / 4, words(*in));
  }
  region->reset();
  in_view->reset();
  out_view->reset();
}

// The two-GPU path through executors: GPU 0's memory, exported by its executor, is
// admitted to GPU 1's executor (which imports it), and a copy on GPU 1 reads it.
TEST_CASE("memory of one executor's GPU is admitted to another's and copied from there", "[executor][peer]") {
  auto gpu0 = open_fake(fake_options(0));
  auto gpu1 = open_fake(fake_options(1));
  constexpr std::size_t kBytes = 4096;
  auto source = gpu0->allocate({kBytes, MemoryPlacement::gpu_local(0)});
  auto destination = gpu1->allocate({kBytes, MemoryPlacement::gpu_local(1)});
  REQUIRE(source.ok());
  REQUIRE(destination.ok());
  auto in = host_pages(kBytes);
  auto out = host_pages(kBytes);
  std::iota(words(*in), words(*in) + kBytes / 4, 7u);
  auto in_on_0 = gpu0->admit(*in, host_info());
  auto out_on_1 = gpu1->admit(*out, host_info());
  REQUIRE(in_on_0.ok());
  REQUIRE(out_on_1.ok());
  const auto run = [](devices::Device& device, const devices::OperationBinding (&copy)[2]) {
    devices::Operation op;
    op.kind = OpKind::Copy;
    op.lane = LaneKind::Compute;
    op.bindings = copy;
    devices::RegionRequest request = devices::RegionRequest::of(std::span<const devices::Operation>(&op, 1));
    auto region = device.lower(request);
    INFO(region.status().to_string());
    REQUIRE(region.ok());
    RecordingSink sink;
    device.launch(**region, {}, sink);
    REQUIRE(sink.wait());
    CHECK(sink.done());
  };
  const devices::OperationBinding upload[2] = {bind(**source, kBytes, Access::Write),
                                               bind(*in, kBytes, Access::Read, in_on_0->get())};
  run(*gpu0, upload);

  devices::DeviceInfo home = gpu0->info();
  auto source_on_1 = gpu1->admit(**source, home);
  INFO(source_on_1.status().to_string());
  REQUIRE(source_on_1.ok());
  CHECK((*source_on_1)->device_address() != 0);
  const devices::OperationBinding across[2] = {bind(**destination, kBytes, Access::Write),
                                               bind(**source, kBytes, Access::Read, source_on_1->get())};
  run(*gpu1, across);
  const devices::OperationBinding download[2] = {bind(*out, kBytes, Access::Write, out_on_1->get()),
                                                 bind(**destination, kBytes, Access::Read)};
  run(*gpu1, download);
  for (std::uint32_t i = 0; i < kBytes / 4; ++i) REQUIRE(words(*out)[i] == i + 7);

  // Host memory whose home is not a GPU still has to be host mapped.
  struct FdOnly final : devices::DeviceMemory {
    int fd = -1;
    std::size_t bytes() const noexcept override { return 4096; }
    std::byte* host_address() const noexcept override { return nullptr; }
    int export_fd() const noexcept override { return fd; }
  } fd_only;
  fd_only.fd = in->export_fd();
  const auto refused = gpu1->admit(fd_only, host_info());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().kind() == ErrorKind::Unsupported);
  CHECK(std::string(refused.status().message()).find("only host-mapped memfd memory and exported GPU memory") !=
        std::string::npos);
}

TEST_CASE("a launch waits natively for a predecessor still running", "[executor]") {
  auto device = open_fake();
  constexpr std::size_t kBytes = 256;
  auto gpu = device->allocate({kBytes, MemoryPlacement::gpu_local(0)});
  REQUIRE(gpu.ok());
  auto in = host_pages(kBytes);
  auto out = host_pages(kBytes);
  std::iota(words(*in), words(*in) + kBytes / 4, 7u);
  auto in_view = device->admit(*in, host_info());
  auto out_view = device->admit(*out, host_info());
  REQUIRE(in_view.ok());
  REQUIRE(out_view.ok());
  auto sleep = load_kernel(*device, "fake.sleep_ms", 0, 150);

  // P: sleep, then A <- in. Q: out <- A. Q must not overtake P on the second worker.
  const devices::OperationBinding p_copy[2] = {bind(**gpu, kBytes, Access::Write),
                                               bind(*in, kBytes, Access::Read, in_view->get())};
  devices::Operation p_ops[2];
  p_ops[0].kind = OpKind::Kernel;
  p_ops[0].code = sleep.get();
  p_ops[1].kind = OpKind::Copy;
  p_ops[1].bindings = p_copy;
  const devices::OperationEdge p_edges[1] = {{0, 1}};
  devices::RegionRequest p_request = devices::RegionRequest::of(p_ops);
  p_request.edges = p_edges;
  auto p = device->lower(p_request);
  REQUIRE(p.ok());
  const devices::OperationBinding q_copy[2] = {bind(*out, kBytes, Access::Write, out_view->get()),
                                               bind(**gpu, kBytes, Access::Read)};
  devices::Operation q_op;
  q_op.kind = OpKind::Copy;
  q_op.bindings = q_copy;
  auto q = device->lower(devices::RegionRequest::of(std::span(&q_op, 1)));
  REQUIRE(q.ok());

  RecordingSink p_sink;
  RecordingSink q_sink;
  device->launch(**p, {}, p_sink);
  const devices::RegionWait before[1] = {{p->get(), 0}};
  device->launch(**q, devices::RegionWaits{0, before}, q_sink);
  REQUIRE(q_sink.wait());
  CHECK(q_sink.done());
  // Q read what P wrote after its sleep: it did not overtake P. (P's report may come
  // after Q's: a device orders execution, not reports.)
  for (std::uint32_t i = 0; i < kBytes / 4; ++i) REQUIRE(words(*out)[i] == i + 7);
  REQUIRE(p_sink.wait());
  CHECK(p_sink.done());
  p->reset();
  q->reset();
}

TEST_CASE("a launch with more native waits than fit in one ring entry keeps them all", "[executor]") {
  auto device = open_fake();
  constexpr std::size_t kBytes = 64;
  auto gpu = device->allocate({kBytes, MemoryPlacement::gpu_local(0)});
  REQUIRE(gpu.ok());
  auto in = host_pages(kBytes);
  auto out = host_pages(kBytes);
  std::iota(words(*in), words(*in) + kBytes / 4, 100u);
  auto in_view = device->admit(*in, host_info());
  auto out_view = device->admit(*out, host_info());
  REQUIRE(in_view.ok());
  REQUIRE(out_view.ok());
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 1);
  auto slow = load_kernel(*device, "fake.sleep_ms", 0, 200);

  // 13 quick predecessors, then a 14th (its wait travels in the third ring entry) that
  // sleeps and only then writes A. The last region reads A: had it lost that wait, the
  // second worker would run it while the 14th still sleeps.
  std::vector<std::unique_ptr<devices::NativeRegion>> before;
  std::vector<RecordingSink> before_sinks(14);
  std::vector<devices::RegionWait> waits;
  for (int i = 0; i < 13; ++i) before.push_back(lower_kernel(*device, *quick));
  const devices::OperationBinding fill_a[2] = {bind(**gpu, kBytes, Access::Write),
                                               bind(*in, kBytes, Access::Read, in_view->get())};
  devices::Operation slow_ops[2];
  slow_ops[0].kind = OpKind::Kernel;
  slow_ops[0].code = slow.get();
  slow_ops[1].kind = OpKind::Copy;
  slow_ops[1].bindings = fill_a;
  const devices::OperationEdge slow_edges[1] = {{0, 1}};
  devices::RegionRequest slow_request = devices::RegionRequest::of(slow_ops);
  slow_request.edges = slow_edges;
  auto slow_region = device->lower(slow_request);
  REQUIRE(slow_region.ok());
  before.push_back(std::move(slow_region).value());
  for (std::size_t i = 0; i < before.size(); ++i) {
    device->launch(*before[i], {}, before_sinks[i]);
    waits.push_back({before[i].get(), 0});
  }
  const devices::OperationBinding read_a[2] = {bind(*out, kBytes, Access::Write, out_view->get()),
                                               bind(**gpu, kBytes, Access::Read)};
  devices::Operation last_op;
  last_op.kind = OpKind::Copy;
  last_op.bindings = read_a;
  auto last = device->lower(devices::RegionRequest::of(std::span(&last_op, 1)));
  REQUIRE(last.ok());
  RecordingSink sink;
  device->launch(**last, devices::RegionWaits{0, waits}, sink);
  REQUIRE(sink.wait());
  CHECK(sink.done());
  for (std::uint32_t i = 0; i < kBytes / 4; ++i) REQUIRE(words(*out)[i] == i + 100);
  for (RecordingSink& s : before_sinks) {
    REQUIRE(s.wait());
    CHECK(s.done());
  }
  before.clear();
  last->reset();
}

TEST_CASE("many launches in flight from several threads complete exactly once each", "[executor]") {
  auto device = open_fake();
  auto sleep = load_kernel(*device, "fake.sleep_ms", 0, 1);
  constexpr std::uint32_t kSlots = 32;
  auto region = lower_kernel(*device, *sleep, kSlots);
  std::vector<RecordingSink> sinks(kSlots);
  for (int round = 0; round < 5; ++round) {
    for (RecordingSink& s : sinks) s.reset();
    std::vector<std::thread> threads;
    for (std::uint32_t t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (std::uint32_t slot = t; slot < kSlots; slot += 4) device->launch(*region, {slot, {}}, sinks[slot]);
      });
    for (std::thread& t : threads) t.join();
    for (RecordingSink& s : sinks) REQUIRE(s.wait());
    // Helpers may poll too; nothing may be reported twice.
    device->poll_completions();
    std::this_thread::sleep_for(20ms);
    for (const RecordingSink& s : sinks) {
      CHECK(s.reports() == 1);
      CHECK(s.done());
    }
  }
}

TEST_CASE("a device that completes by polling is polled by the executor's consumer thread", "[executor]") {
  executor::ExecutorOptions options = fake_options();
  options.device_options["fake.polling"] = "1";  // nothing reports unless someone polls
  auto device = open_fake(options);
  auto sleep = load_kernel(*device, "fake.sleep_ms", 0, 1);
  auto fail = load_kernel(*device, "fake.fail");
  constexpr std::uint32_t kSlots = 16;
  auto region = lower_kernel(*device, *sleep, kSlots);
  auto failing = lower_kernel(*device, *fail);
  std::vector<RecordingSink> sinks(kSlots);
  RecordingSink failed;
  for (int round = 0; round < 3; ++round) {
    for (RecordingSink& s : sinks) s.reset();
    failed.reset();
    for (std::uint32_t slot = 0; slot < kSlots; ++slot) device->launch(*region, {slot, {}}, sinks[slot]);
    device->launch(*failing, {}, failed);
    for (RecordingSink& s : sinks) {
      REQUIRE(s.wait());
      CHECK(s.done());
    }
    REQUIRE(failed.wait());
    CHECK(failed.error().kind() == ErrorKind::Execution);
  }
}

TEST_CASE("a failing kernel reports Execution and the device stays usable", "[executor]") {
  auto device = open_fake();
  auto fail = load_kernel(*device, "fake.fail");
  auto region = lower_kernel(*device, *fail);
  RecordingSink sink;
  device->launch(*region, {}, sink);
  REQUIRE(sink.wait());
  CHECK(sink.error().kind() == ErrorKind::Execution);
  CHECK_THAT(std::string(sink.error().message()), Catch::Contains("fake.fail failed as asked"));
  auto ok = load_kernel(*device, "fake.sleep_ms");
  auto ok_region = lower_kernel(*device, *ok);
  RecordingSink ok_sink;
  device->launch(*ok_region, {}, ok_sink);
  REQUIRE(ok_sink.wait());
  CHECK(ok_sink.done());
  CHECK(device->generation() == 1);
}

TEST_CASE("requests the executor refuses come back with its error, and large images travel in a memfd",
          "[executor]") {
  auto device = open_fake();
  devices::CodeImage image;
  image.name = "fake.unknown";
  auto unknown = device->load(image, {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().kind() == ErrorKind::Unsupported);
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("unknown kernel 'fake.unknown'"));

  auto wrong = device->allocate({64, MemoryPlacement::host_visible()});
  CHECK(wrong.status().kind() == ErrorKind::Unsupported);
  CHECK(device->allocate({0, MemoryPlacement::gpu_local(0)}).status().kind() == ErrorKind::Invalid);

  image.name = "fake.fail";
  image.image.assign(300 * 1024, std::byte{0x5a});  // beyond one record: sent as a sealed memfd
  auto big = device->load(image, {});
  INFO(big.status().to_string());
  CHECK(big.ok());
}

}  // namespace accord::testing
