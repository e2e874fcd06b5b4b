// Completion words (daemon/executor/README.md, "Completion words"): a waiting thread in
// accordd sees a launch end by reading the word the executor's device sets, before the
// executor's completion record arrives; the record that follows is dropped, even when the
// slot has been launched again meanwhile, and every launch is still reported once.
#include <sys/mman.h>

#include <thread>
#include <vector>

#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {
namespace {

// What fake.sleep_us writes to its binding once it has slept (fake_gpu_device.cpp).
constexpr std::uint32_t kSleepMarker = 0x5EE9D0E5u;

executor::ExecutorOptions word_options(std::chrono::microseconds report_delay = std::chrono::microseconds(0)) {
  executor::ExecutorOptions options = fake_options();
  options.device_options["fake.words"] = "1";
  options.device_options["fake.report_delay_us"] = std::to_string(report_delay.count());
  return options;
}

// Polls as the engine's waiting threads do, until `sink` has been told.
bool poll_until(devices::Device& device, const RecordingSink& sink) {
  return eventually(
      [&] {
        device.poll_completions();
        return sink.reports() > 0;
      },
      10s);
}

}  // namespace

TEST_CASE("a waiting thread sees a launch end by its completion word, before the executor reports it",
          "[executor][words]") {
  // The fake tells its sink (and so the executor's completion record) 500 ms after the
  // word says done; a thread that polls must not need that record.
  auto device = open_fake(word_options(500ms));
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 0);
  auto region = lower_kernel(*device, *quick);
  RecordingSink first;
  const auto launched = std::chrono::steady_clock::now();
  device->launch(*region, {}, first);
  REQUIRE(poll_until(*device, first));
  CHECK(first.done());
  CHECK(device->completions_by_word() == 1);
  // The record is still on its way (the fake holds it back); seen by the word, the
  // launch was reported sooner than the record could have been.
  CHECK(std::chrono::steady_clock::now() - launched < 500ms);
}

TEST_CASE("a completion record that comes after the word reported its launch does not end the slot's next launch",
          "[executor][words]") {
  auto device = open_fake(word_options(500ms));
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 0);
  auto fail = load_kernel(*device, "fake.fail");
  auto region = lower_kernel(*device, *quick);
  RecordingSink first;
  device->launch(*region, {}, first);
  REQUIRE(poll_until(*device, first));
  REQUIRE(first.done());
  // The first launch's Done record arrives while this one is in flight; this one fails.
  auto failing = lower_kernel(*device, *fail);
  RecordingSink second;
  device->launch(*failing, {}, second);
  RecordingSink third;
  device->launch(*region, {}, third);  // slot 0 of `region` again, the late record's slot
  REQUIRE(poll_until(*device, second));
  REQUIRE(poll_until(*device, third));
  CHECK(second.error().kind() == ErrorKind::Execution);
  CHECK(third.done());
  // Nothing reported twice, and the late records changed nothing.
  std::this_thread::sleep_for(1200ms);
  device->poll_completions();
  CHECK(first.reports() == 1);
  CHECK(second.reports() == 1);
  CHECK(third.reports() == 1);
  CHECK(device->completions_by_word() == 2);
}

TEST_CASE("a late record of a slot's earlier launch does not report the launch now in flight there",
          "[executor][words]") {
  // A region whose kernel sleeps 1 s, then writes a marker into GPU memory; the fake
  // tells its sink 300 ms after the word. The first launch is seen by its word; the slot
  // is launched again at once, and the first launch's record arrives 300 ms later, while
  // the second still sleeps: were it taken for the second's, that one would be reported
  // done before its marker was written.
  auto device = open_fake(word_options(300ms));
  devices::CodeImage image;
  image.name = "fake.sleep_us";
  image.device = device->info().id();
  KernelContract contract;
  contract.bindings.push_back({4, 4, Access::ReadWrite, "u32"});
  append_constant(contract.constants, std::uint32_t{1'000'000});
  auto code = device->load(image, contract);
  REQUIRE(code.ok());
  auto memory = device->allocate({4096, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  REQUIRE(memory.value()->export_fd() >= 0);
  void* mapped = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memory.value()->export_fd(), 0);
  REQUIRE(mapped != MAP_FAILED);
  auto* marker = static_cast<std::atomic<std::uint32_t>*>(mapped);
  devices::Operation op;
  op.kind = devices::OpKind::Kernel;
  op.lane = LaneKind::Compute;
  op.code = code.value().get();
  const devices::OperationBinding binding = bind(*memory.value(), 4, Access::ReadWrite);
  op.bindings = std::span(&binding, 1);
  auto lowered = device->lower(devices::RegionRequest::of(std::span(&op, 1)));
  REQUIRE(lowered.ok());
  devices::NativeRegion& region = *lowered.value();

  RecordingSink first;
  device->launch(region, {}, first);
  REQUIRE(poll_until(*device, first));
  REQUIRE(first.done());
  CHECK(marker->load() == kSleepMarker);
  marker->store(0);
  RecordingSink second;
  device->launch(region, {}, second);
  REQUIRE(poll_until(*device, second));
  CHECK(second.done());
  CHECK(marker->load() == kSleepMarker);  // it had run when it was reported
  std::this_thread::sleep_for(400ms);     // its own record comes and is dropped
  device->poll_completions();
  CHECK(first.reports() == 1);
  CHECK(second.reports() == 1);
  CHECK(device->completions_by_word() == 2);
  ::munmap(mapped, 4096);
}

TEST_CASE("with completion words, launches from several threads with helpers polling each report once",
          "[executor][words]") {
  auto device = open_fake(word_options());
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 0);
  constexpr std::uint32_t kSlots = 8;
  constexpr int kThreads = 4;
  constexpr int kRounds = 150;
  std::vector<std::unique_ptr<devices::NativeRegion>> regions;
  for (int t = 0; t < kThreads; ++t) regions.push_back(lower_kernel(*device, *quick, kSlots));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<RecordingSink> sinks(kSlots);
      for (int round = 0; round < kRounds; ++round) {
        for (RecordingSink& s : sinks) s.reset();
        for (std::uint32_t slot = 0; slot < kSlots; ++slot) device->launch(*regions[t], {slot, {}}, sinks[slot]);
        for (RecordingSink& s : sinks) {
          // Half the threads help, half leave it to the completion thread.
          const bool ok = t % 2 == 0 ? poll_until(*device, s) : s.wait();
          if (!ok || !s.done()) ++wrong;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        for (const RecordingSink& s : sinks)
          if (s.reports() != 1) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
  CHECK(device->completions_by_word() > 0);
  CHECK(device->completions_by_word() <= std::uint64_t{kThreads} * kRounds * kSlots);
}

TEST_CASE("killing an executor with words fails every launch in flight once and the next executor's words work",
          "[executor][words]") {
  auto device = open_fake(word_options());
  auto slow = load_kernel(*device, "fake.sleep_ms", 0, 2000);
  auto region = lower_kernel(*device, *slow, 4);
  std::vector<RecordingSink> sinks(4);
  for (std::uint32_t slot = 0; slot < 4; ++slot) device->launch(*region, {slot, {}}, sinks[slot]);
  const pid_t pid = device->executor_pid();
  REQUIRE(::kill(pid, SIGKILL) == 0);
  for (RecordingSink& s : sinks) {
    REQUIRE(s.wait());
    CHECK(s.error().kind() == ErrorKind::DeviceLost);
  }
  REQUIRE(eventually([&] { return device->generation() == 2 && device->executor_pid() > 0; }));
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 0);
  auto fresh = lower_kernel(*device, *quick);
  const std::uint64_t before = device->completions_by_word();
  RecordingSink after;
  device->launch(*fresh, {}, after);
  REQUIRE(poll_until(*device, after));
  CHECK(after.done());
  CHECK(device->completions_by_word() >= before);
  for (const RecordingSink& s : sinks) CHECK(s.reports() == 1);
}

}  // namespace accord::testing

namespace accord::testing {

TEST_CASE("a region released as soon as its word said done is freed only after the executor's own report",
          "[executor][words]") {
  // accordd learns of the launch's end from the word 300 ms before the executor's device
  // reports it; the region's release arrives in between and must not free what the
  // device still holds (this crashed the executor before it waited).
  auto device = open_fake(word_options(300ms));
  auto quick = load_kernel(*device, "fake.sleep_ms", 0, 0);
  const pid_t pid = device->executor_pid();
  for (int i = 0; i < 3; ++i) {
    auto region = lower_kernel(*device, *quick);
    RecordingSink sink;
    device->launch(*region, {}, sink);
    REQUIRE(poll_until(*device, sink));
    CHECK(sink.done());
    region.reset();  // released while the executor's report is still held back
  }
  auto region = lower_kernel(*device, *quick);
  RecordingSink last;
  device->launch(*region, {}, last);
  REQUIRE(poll_until(*device, last));
  CHECK(last.done());
  CHECK(device->executor_pid() == pid);
  CHECK(device->generation() == 1);
}

}  // namespace accord::testing
