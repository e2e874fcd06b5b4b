// Which pooled stream CudaDevice::launch takes (cuda_device.cpp, take_stream), on the
// stand-in driver's graph engine, which logs each launch's stream: a region takes its
// last stream again while that one is idle, another region starts elsewhere, and a
// launch whose region's stream is busy takes an idle one. Tagged [fake].
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_region.h"
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

using testing::FakeGpus;

// The streams of the launches logged since the last "clear", in order.
std::vector<std::string> launch_streams(const FakeGpus& gpus) {
  std::vector<std::string> streams;
  for (const std::string& line : gpus.log())
    if (line.starts_with("cuGraphLaunch stream=")) streams.push_back(line.substr(line.find('=') + 1));
  return streams;
}

TEST_CASE("a region's launches keep its stream while it is idle and take another while it is busy",
          "[cuda][streams][fake]") {
  CudaDeviceOptions options;
  options.streams_per_lane = 4;
  options.poll.event_check = std::chrono::seconds(60);  // only a flag reports a launch
  FakeGpus gpus(1, {"graphs=1"}, options);
  CudaDevice& device = gpus.gpu(0);
  constexpr std::uint32_t kSlots = 3;
  const auto first = testing::lower(device, {}, {}, kSlots);
  const auto second = testing::lower(device, {}, {}, kSlots);
  testing::RecordingSink sink;
  gpus.control("clear");

  // One launch at a time, slot after slot, as a tenant looping a graph submits it.
  for (std::uint32_t round = 0; round < 2 * kSlots; ++round) testing::launch_and_wait(device, *first, sink, round % kSlots);
  testing::launch_and_wait(device, *second, sink, 0);
  testing::launch_and_wait(device, *second, sink, 1);
  std::vector<std::string> streams = launch_streams(gpus);
  REQUIRE(streams.size() == 2 * kSlots + 2);
  for (std::uint32_t i = 1; i < 2 * kSlots; ++i) CHECK(streams[i] == streams[0]);
  CHECK(streams[2 * kSlots] != streams[0]);  // the other region started elsewhere
  CHECK(streams[2 * kSlots + 1] == streams[2 * kSlots]);
  const std::string first_stream = streams[0];

  // A launch of the first region that does not end holds its stream; the next launch of
  // that region must not queue behind it.
  gpus.control("clear");
  gpus.control("ignore=cuGraphLaunch");
  device.launch(*first, RegionWaits{0, {}}, sink);
  gpus.control("ignore=");
  testing::launch_and_wait(device, *first, sink, 1);
  streams = launch_streams(gpus);
  REQUIRE(streams.size() == 1);  // the held launch is not logged
  CHECK(streams[0] != first_stream);
  // End the held launch (its flag written as the GPU would), so the region can go.
  const int before = sink.calls();
  static_cast<CudaRegion&>(*first).slot(0).flag.word->store(kFlagDone, std::memory_order_release);
  REQUIRE(sink.wait_for(before + 1));
  CHECK(sink.errors() == 0);
  CHECK(sink.done() == static_cast<int>(2 * kSlots + 2 + 2));
}

// The compute stream that one launch of a new region on `device` takes.
std::string stream_of_one_launch(FakeGpus& gpus, CudaDevice& device) {
  const auto region = testing::lower(device, {}, {}, 1);
  testing::RecordingSink sink;
  gpus.control("clear");
  testing::launch_and_wait(device, *region, sink, 0);
  const std::vector<std::string> streams = launch_streams(gpus);
  REQUIRE(streams.size() == 1);
  CHECK(sink.errors() == 0);
  return streams[0];
}

TEST_CASE("each device of the process on one GPU launches on streams of its own", "[cuda][streams][fake]") {
  CudaDeviceOptions options;
  options.streams_per_lane = 1;  // so that a device's launches all take the one stream of its pool
  options.poll.event_check = std::chrono::seconds(60);
  FakeGpus gpus(1, {"graphs=1"}, options);
  // A second CudaDevice on the same GPU, as a second embedded runtime of the process
  // opens it (the stand-in driver's table outlives it: gpus owns it).
  auto second =
      CudaDevice::open(std::shared_ptr<const CudaSymbols>(&gpus.syms(), [](const CudaSymbols*) {}), 0, options);
  REQUIRE(second.ok());
  const std::string first_stream = stream_of_one_launch(gpus, gpus.gpu(0));
  const std::string second_stream = stream_of_one_launch(gpus, *second.value());
  CHECK(second_stream != first_stream);
  CHECK(stream_of_one_launch(gpus, *second.value()) == second_stream);
  second.value()->shut_down();
}

}  // namespace
}  // namespace accord::devices::cuda
