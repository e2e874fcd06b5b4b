// cuda.launcher = thread (cuda_launcher.cpp): launches are made by one thread of the
// process per GPU, not by the threads that ask, in the order each asked, shared by every
// device of that GPU, and a device that shuts down makes what it queued first. On the
// stand-in driver, which logs each launch's graph and thread. Tagged [fake].
#include <catch2/catch.hpp>

#include <unistd.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/devices/cuda/cuda_region.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using testing::FakeGpus;

struct LoggedLaunch {
  std::string exec;
  std::string thread;
};

std::string field(const std::string& line, const std::string& name) {
  const std::size_t from = line.find(name + "=") + name.size() + 1;
  return line.substr(from, line.find(' ', from) - from);
}

std::vector<LoggedLaunch> logged_launches(const FakeGpus& gpus) {
  std::vector<LoggedLaunch> launches;
  for (const std::string& line : gpus.log())
    if (line.starts_with("cuGraphLaunch ")) launches.push_back({field(line, "exec"), field(line, "thread")});
  return launches;
}

std::string exec_of(NativeRegion& region, std::uint32_t slot) {
  return std::to_string(reinterpret_cast<std::uintptr_t>(static_cast<CudaRegion&>(region).slot(slot).exec.get()));
}

CudaDeviceOptions thread_launcher() {
  CudaDeviceOptions options;
  options.launcher = CudaLaunchMode::Thread;
  return options;
}

TEST_CASE("with cuda.launcher = thread one thread makes every launch, in the order each caller asked",
          "[cuda][launcher][fake]") {
  FakeGpus gpus(1, {"graphs=1"}, thread_launcher());
  CudaDevice& device = gpus.gpu(0);
  constexpr int kCallers = 4;
  constexpr std::uint32_t kSlots = 8;
  constexpr int kRounds = 25;
  std::vector<std::unique_ptr<NativeRegion>> regions;
  for (int c = 0; c < kCallers; ++c) regions.push_back(testing::lower(device, {}, {}, kSlots));
  gpus.control("clear");

  // Each caller launches its region's slots back to back, then waits for all of them.
  std::vector<std::string> callers(kCallers);
  std::vector<int> done(kCallers, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < kCallers; ++c) {
    threads.emplace_back([&, c] {
      callers[static_cast<std::size_t>(c)] = std::to_string(gettid());
      testing::RecordingSink sink;
      for (int round = 0; round < kRounds; ++round) {
        for (std::uint32_t slot = 0; slot < kSlots; ++slot) device.launch(*regions[c], RegionWaits{slot, {}}, sink);
        if (!sink.wait_for((round + 1) * static_cast<int>(kSlots))) return;
      }
      done[static_cast<std::size_t>(c)] = sink.done();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < kCallers; ++c) CHECK(done[static_cast<std::size_t>(c)] == kRounds * static_cast<int>(kSlots));

  const std::vector<LoggedLaunch> launches = logged_launches(gpus);
  REQUIRE(launches.size() == static_cast<std::size_t>(kCallers * kRounds) * kSlots);
  const std::set<std::string> launching_threads = [&] {
    std::set<std::string> ids;
    for (const LoggedLaunch& l : launches) ids.insert(l.thread);
    return ids;
  }();
  CHECK(launching_threads.size() == 1);
  for (const std::string& caller : callers) CHECK(launching_threads.count(caller) == 0);
  // Each caller's launches in the order it asked: slot 0..7, round after round.
  for (int c = 0; c < kCallers; ++c) {
    std::vector<std::string> mine;
    std::set<std::string> execs;
    for (std::uint32_t slot = 0; slot < kSlots; ++slot) execs.insert(exec_of(*regions[c], slot));
    for (const LoggedLaunch& l : launches)
      if (execs.count(l.exec)) mine.push_back(l.exec);
    REQUIRE(mine.size() == static_cast<std::size_t>(kRounds) * kSlots);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      INFO("caller " << c << ", launch " << i);
      CHECK(mine[i] == exec_of(*regions[c], static_cast<std::uint32_t>(i % kSlots)));
    }
  }
}

TEST_CASE("two devices of one GPU opened with cuda.launcher = thread share its launching thread",
          "[cuda][launcher][fake]") {
  FakeGpus gpus(1, {"graphs=1"}, thread_launcher());
  // A second device of GPU 0, as a second embedded runtime of the process opens it.
  auto second = CudaDevice::open(std::shared_ptr<const CudaSymbols>(std::shared_ptr<void>(), &gpus.syms()), 0,
                                 thread_launcher());
  REQUIRE(second.ok());
  const auto a = testing::lower(gpus.gpu(0), {}, {}, 1);
  const auto b = testing::lower(*second.value(), {}, {}, 1);
  gpus.control("clear");
  testing::RecordingSink sink;
  testing::launch_and_wait(gpus.gpu(0), *a, sink);
  testing::launch_and_wait(*second.value(), *b, sink);
  const std::vector<LoggedLaunch> launches = logged_launches(gpus);
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].exec == exec_of(*a, 0));
  CHECK(launches[1].exec == exec_of(*b, 0));
  CHECK(launches[0].thread == launches[1].thread);
  CHECK(launches[0].thread != std::to_string(gettid()));
  CHECK(sink.done() == 2);
}

TEST_CASE("a device with launches queued for the launching thread makes them before it shuts down",
          "[cuda][launcher][fake]") {
  FakeGpus gpus(1, {"graphs=1"}, thread_launcher());
  CudaDevice& device = gpus.gpu(0);
  constexpr std::uint32_t kSlots = 64;
  const auto region = testing::lower(device, {}, {}, kSlots);
  gpus.control("clear");
  testing::RecordingSink sink;
  for (std::uint32_t slot = 0; slot < kSlots; ++slot) device.launch(*region, RegionWaits{slot, {}}, sink);
  device.shut_down();
  // Every launch was made (and none of the callers made one), whether or not it was
  // reported before the completion thread stopped.
  const std::vector<LoggedLaunch> launches = logged_launches(gpus);
  CHECK(launches.size() == kSlots);
  for (const LoggedLaunch& l : launches) CHECK(l.thread != std::to_string(gettid()));
}

TEST_CASE("cuda.launcher = caller launches on the calling thread", "[cuda][launcher][fake]") {
  FakeGpus gpus(1, {"graphs=1"});
  CudaDevice& device = gpus.gpu(0);
  const auto region = testing::lower(device, {}, {}, 1);
  gpus.control("clear");
  testing::RecordingSink sink;
  testing::launch_and_wait(device, *region, sink);
  const std::vector<LoggedLaunch> launches = logged_launches(gpus);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0].thread == std::to_string(gettid()));
}

}  // namespace
}  // namespace accord::devices::cuda
