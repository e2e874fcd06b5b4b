// The completion thread (cuda_completion.cpp) without a GPU: the stand-in driver's
// cuEventQuery answers from an int the test owns, so reports, their order, failed
// launches, sticky faults and shutdown can be driven step by step. The [gpu] tests in
// cuda_region_test.cpp and cuda_fault_test.cpp cover the same paths on hardware.
#include <stdlib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "daemon/devices/cuda/cuda_completion.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

#ifdef ACCORD_CUDA_FAKE_DRIVER
namespace accord::devices::cuda {
namespace {

using namespace testing;

class Observer final : public CudaLossObserver {
 public:
  void on_sticky_error(Status cause) noexcept override {
    const std::lock_guard lock(mu_);
    ++calls_;
    cause_ = std::move(cause);
  }
  int calls() {
    const std::lock_guard lock(mu_);
    return calls_;
  }
  Status cause() {
    const std::lock_guard lock(mu_);
    return cause_;
  }

 private:
  std::mutex mu_;
  int calls_ = 0;
  Status cause_;
};

// A slot whose done-event is `state` (the CUresult the fake cuEventQuery returns).
struct FakeSlot {
  FakeSlot(const CudaSymbols& syms, int initial) : state(initial) {
    slot.done = UniqueCuEvent(syms, nullptr, reinterpret_cast<CUevent>(&state));
  }
  void set(CUresult result) { __atomic_store_n(&state, static_cast<int>(result), __ATOMIC_RELEASE); }
  int state;
  CudaSlot slot;
};

struct Fixture {
  Fixture() {
    CudaLoaderOptions options;
    options.library = ACCORD_CUDA_FAKE_DRIVER;
    auto loaded = CudaSymbols::load(options);
    REQUIRE(loaded.ok());
    syms = std::move(loaded).value();
    context = CudaContext{syms.get(), 0, nullptr, 0};
    CudaPollOptions poll;
    poll.spin = std::chrono::microseconds(50);
    poll.max_sleep = std::chrono::microseconds(200);
    auto started = CudaCompletionQueue::start(context, "gpu:0", poll, observer);
    REQUIRE(started.ok());
    queue = std::move(started).value();
  }
  void push(FakeSlot& s, CompletionSink& sink) {
    s.slot.sink = &sink;
    queue->push(s.slot);
  }
  std::shared_ptr<const CudaSymbols> syms;
  CudaContext context;
  Observer observer;
  std::unique_ptr<CudaCompletionQueue> queue;
};

TEST_CASE("a completed event is reported done once, from the completion thread", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);
  RecordingSink sink;
  f.push(a, sink);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(sink.calls() == 0);  // still running
  a.set(CUDA_SUCCESS);
  REQUIRE(sink.wait_for(1));
  CHECK(sink.done() == 1);
  CHECK(sink.last_thread() != std::this_thread::get_id());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(sink.calls() == 1);
  f.queue->shut_down();
}

TEST_CASE("a predecessor is reported before a successor that finished right after it", "[cuda][completion][fake]") {
  Fixture f;
  for (int round = 0; round < 200; ++round) {
    INFO("round " << round);
    FakeSlot predecessor(*f.syms, CUDA_ERROR_NOT_READY);
    FakeSlot successor(*f.syms, CUDA_ERROR_NOT_READY);
    RecordingSink first;
    RecordingSink second;
    f.push(predecessor, first);
    f.push(successor, second);
    // On a GPU the successor waits for the predecessor's event: it can only finish after.
    predecessor.set(CUDA_SUCCESS);
    successor.set(CUDA_SUCCESS);
    REQUIRE(first.wait_for(1));
    REQUIRE(second.wait_for(1));
    REQUIRE(first.last_order() < second.last_order());
  }
  f.queue->shut_down();
}

TEST_CASE("a failed launch is reported as Execution naming the call", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_SUCCESS);
  a.slot.launch_result = CUDA_ERROR_INVALID_HANDLE;
  a.slot.launch_call = "cuGraphLaunch";
  RecordingSink sink;
  f.push(a, sink);
  REQUIRE(sink.wait_for(1));
  REQUIRE(sink.errors() == 1);
  const Status error = sink.last_error();
  CHECK(error.kind() == ErrorKind::Execution);
  CHECK(std::string(error.message()).starts_with("cuGraphLaunch: "));
  CHECK(std::string(error.message()).find("launching a region on gpu:0") != std::string::npos);
  CHECK(f.observer.calls() == 0);  // not sticky
  f.queue->shut_down();
}

TEST_CASE("a sticky fault fails every region in flight and reports the loss once", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);
  FakeSlot b(*f.syms, CUDA_ERROR_NOT_READY);
  RecordingSink sa;
  RecordingSink sb;
  f.push(a, sa);
  f.push(b, sb);
  a.set(CUDA_ERROR_ILLEGAL_ADDRESS);
  b.set(CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(sa.wait_for(1));
  REQUIRE(sb.wait_for(1));
  CHECK(sa.errors() == 1);
  CHECK(sb.errors() == 1);
  CHECK(sa.last_error().kind() == ErrorKind::Execution);
  CHECK(std::string(sa.last_error().message()).starts_with("cuEventQuery: "));
  CHECK(f.observer.calls() == 1);
  CHECK(f.observer.cause().kind() == ErrorKind::DeviceLost);
  CHECK(std::string(f.observer.cause().message()).starts_with("gpu:0 is lost: cuEventQuery: "));
  f.queue->shut_down();
}

// A completion flag the test owns, as the pool hands them out (a word and its "device" address).
struct FakeFlag {
  alignas(64) std::atomic<std::uint32_t> word{0};
  CudaFlag flag() { return CudaFlag{&word, 0x1000}; }
};

TEST_CASE("a flag read 1 completes its slot, and a waiting thread's poll() reports it", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);  // the event never says done: only the flag can
  FakeFlag flag;
  a.slot.flag = flag.flag();
  a.slot.checked_ns = steady_now_ns();
  RecordingSink sink;
  f.push(a, sink);
  int by_poll = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < until) by_poll += f.queue->poll();  // the thread rests meanwhile
  CHECK(sink.calls() == 0);
  CHECK(by_poll == 0);
  flag.word.store(1, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sink.calls() == 0 && std::chrono::steady_clock::now() < deadline) by_poll += f.queue->poll();
  REQUIRE(sink.calls() == 1);
  CHECK(sink.done() == 1);
  CHECK(by_poll <= 1);  // reported once, by the helper or (if it was preempted) by the thread
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(sink.calls() == 1);
  CHECK(f.queue->poll() == 0);
  f.queue->shut_down();
  CHECK(f.queue->poll() == 0);  // after shut_down poll() does nothing
}

TEST_CASE("a failed launch releases what waits on its flag and is still reported as its failure",
          "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_SUCCESS);
  FakeFlag flag;
  a.slot.flag = flag.flag();
  a.slot.launch_result = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  a.slot.launch_call = "cuGraphLaunch";
  RecordingSink sink;
  f.push(a, sink);
  // A successor's stream waits for the word to reach kFlagDone or more: it goes on.
  CHECK(flag.word.load() == kFlagReleased);
  CHECK(kFlagReleased >= kFlagDone);
  REQUIRE(sink.wait_for(1));
  CHECK(sink.done() == 0);
  REQUIRE(sink.errors() == 1);
  CHECK(std::string(sink.last_error().message()).starts_with("cuGraphLaunch: "));
  f.queue->shut_down();
}

TEST_CASE("a flag released by a failed launch is not taken for done", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);  // the event never says done
  FakeFlag flag;
  a.slot.flag = flag.flag();
  a.slot.checked_ns = steady_now_ns();
  RecordingSink sink;
  f.push(a, sink);
  flag.word.store(kFlagReleased, std::memory_order_release);
  for (int i = 0; i < 100; ++i) f.queue->poll();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  CHECK(sink.calls() == 0);
  flag.word.store(kFlagDone, std::memory_order_release);
  REQUIRE(sink.wait_for(1));
  CHECK(sink.done() == 1);
  f.queue->shut_down();
}

TEST_CASE("a flag that does not come is explained by the event: a fault fails the slot", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);
  FakeFlag flag;
  a.slot.flag = flag.flag();
  a.slot.checked_ns = steady_now_ns();
  RecordingSink sink;
  f.push(a, sink);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  CHECK(sink.calls() == 0);  // no flag, and the event says not ready
  a.set(CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(sink.wait_for(1));
  CHECK(sink.errors() == 1);
  CHECK(sink.last_error().kind() == ErrorKind::Execution);
  CHECK(f.observer.calls() == 1);
  f.queue->shut_down();
}

TEST_CASE("a late flag with a launch stream is explained by the stream, not the event", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_SUCCESS);  // an event that was never recorded answers done: it must not be asked
  int stream_state = CUDA_ERROR_NOT_READY;  // the fake cuStreamQuery answers from this int
  FakeFlag flag;
  a.slot.flag = flag.flag();
  a.slot.stream = reinterpret_cast<CUstream>(&stream_state);
  a.slot.checked_ns = steady_now_ns();
  RecordingSink sink;
  f.push(a, sink);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(sink.calls() == 0);  // no flag, and the stream still runs
  __atomic_store_n(&stream_state, static_cast<int>(CUDA_ERROR_ILLEGAL_ADDRESS), __ATOMIC_RELEASE);
  REQUIRE(sink.wait_for(1));
  CHECK(sink.errors() == 1);
  CHECK(sink.last_error().kind() == ErrorKind::Execution);
  CHECK(std::string(sink.last_error().message()).find("cuStreamQuery") != std::string::npos);
  CHECK(f.observer.calls() == 1);
  f.queue->shut_down();
}

TEST_CASE("after shut_down nothing is reported and a slot in flight is abandoned", "[cuda][completion][fake]") {
  Fixture f;
  FakeSlot a(*f.syms, CUDA_ERROR_NOT_READY);
  RecordingSink sink;
  f.push(a, sink);
  f.queue->shut_down();
  f.queue->shut_down();
  a.set(CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(sink.calls() == 0);
}

TEST_CASE("slots pushed from several threads are each reported once", "[cuda][completion][fake][threads]") {
  Fixture f;
  constexpr int kPerThread = 100;
  std::vector<std::unique_ptr<FakeSlot>> slots;
  for (int i = 0; i < 4 * kPerThread; ++i) slots.push_back(std::make_unique<FakeSlot>(*f.syms, CUDA_SUCCESS));
  std::array<RecordingSink, 4> sinks;
  std::atomic<bool> timed_out{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      // A sink is reused only after its previous report, as the engine does per slot.
      // (No Catch2 assertions off the main thread: Catch2 v2 is not thread-safe.)
      for (int i = 0; i < kPerThread; ++i) {
        f.push(*slots[static_cast<std::size_t>(t * kPerThread + i)], sinks[static_cast<std::size_t>(t)]);
        if (!sinks[static_cast<std::size_t>(t)].wait_for(i + 1)) {
          timed_out = true;
          return;
        }
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK_FALSE(timed_out);
  for (RecordingSink& s : sinks) CHECK(s.done() == kPerThread);
  f.queue->shut_down();
}

}  // namespace
}  // namespace accord::devices::cuda
#endif
