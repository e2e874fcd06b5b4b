// CudaLaunchCombiner (cuda_launch_combiner.h) without a driver: every queued launch runs
// exactly once, one at a time, each caller's in its order; a lone caller runs its own
// launch on its own thread. Runs under ThreadSanitizer in CI (the tsan configuration
// builds unit/devices/cuda).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "daemon/devices/cuda/cuda_launch_combiner.h"

namespace accord::devices::cuda {
namespace {

// What one launch records: who asked and which of its launches it was.
struct Probe {
  std::atomic<bool>* running;
  std::atomic<int>* overlaps;
  std::vector<std::uint64_t>* seen;  // per caller: the sequence numbers run, in run order
  std::uint64_t sequence;
};

void run_probe(void* context) noexcept {
  auto* p = static_cast<Probe*>(context);
  if (p->running->exchange(true, std::memory_order_acquire)) p->overlaps->fetch_add(1);
  p->seen->push_back(p->sequence);  // unsynchronised on purpose: only one launch runs at a time
  p->running->store(false, std::memory_order_release);
}

TEST_CASE("a launch combiner runs every queued launch once, one at a time, in each caller's order",
          "[cuda][combiner]") {
  constexpr int kCallers = 8;
  constexpr std::uint64_t kLaunches = 3000;
  CudaLaunchCombiner combiner;
  std::atomic<bool> running{false};
  std::atomic<int> overlaps{0};
  std::vector<std::vector<std::uint64_t>> seen(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (std::uint64_t i = 0; i < kLaunches; ++i) {
        Probe probe{&running, &overlaps, &seen[static_cast<std::size_t>(c)], i};
        CudaLaunchCombiner::Request request;
        request.run = run_probe;
        request.context = &probe;
        combiner.launch(request);
      }
    });
  }
  for (auto& t : callers) t.join();
  CHECK(overlaps.load() == 0);
  for (int c = 0; c < kCallers; ++c) {
    const auto& mine = seen[static_cast<std::size_t>(c)];
    REQUIRE(mine.size() == kLaunches);
    bool in_order = true;
    for (std::uint64_t i = 0; i < kLaunches; ++i) in_order = in_order && mine[i] == i;
    CHECK(in_order);
  }
  INFO("launches made for another caller: " << combiner.combined());
  CHECK(combiner.combined() <= kCallers * kLaunches);
}

TEST_CASE("a lone caller's launch runs on its own thread and returns at once", "[cuda][combiner]") {
  CudaLaunchCombiner combiner;
  struct Where {
    std::thread::id id;
    int runs = 0;
  } where;
  for (int i = 0; i < 3; ++i) {
    CudaLaunchCombiner::Request request;
    request.context = &where;
    request.run = [](void* context) noexcept {
      auto* w = static_cast<Where*>(context);
      w->id = std::this_thread::get_id();
      ++w->runs;
    };
    combiner.launch(request);
    CHECK(request.done.load());
  }
  CHECK(where.runs == 3);
  CHECK(where.id == std::this_thread::get_id());
  CHECK(combiner.combined() == 0);
}

TEST_CASE("the combiner of a key is shared while held and made anew after", "[cuda][combiner]") {
  int a = 0, b = 0;
  std::shared_ptr<CudaLaunchCombiner> first = CudaLaunchCombiner::for_key(&a);
  CHECK(CudaLaunchCombiner::for_key(&a) == first);
  CHECK(CudaLaunchCombiner::for_key(&b) != first);
  const CudaLaunchCombiner* old = first.get();
  first.reset();
  std::shared_ptr<CudaLaunchCombiner> again = CudaLaunchCombiner::for_key(&a);
  CHECK(again != nullptr);
  static_cast<void>(old);
}

}  // namespace
}  // namespace accord::devices::cuda
