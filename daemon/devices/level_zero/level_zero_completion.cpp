// Waiting on fences. The completion thread waits on the oldest fence in slices of
// poll_us, so a hung region (the emulator's stall hook, a wedged NPU) never keeps stop()
// waiting longer than one slice; the engine's watchdog is what fails the hung region
// itself. While a helper waits, the thread rests on the condition variable: the fence
// wakes the helper, and whichever thread pops the launch reports it.
#include "daemon/devices/level_zero/level_zero_completion.h"

#include <thread>

#include "daemon/devices/level_zero/level_zero_status.h"
#include "client/api/thread_name.h"

namespace accord::devices::level_zero {

NpuCompletion::NpuCompletion(const ZeSymbols& ze, std::uint32_t poll_us, std::function<void(Status)> on_lost)
    : ze_(ze), poll_ns_(std::uint64_t{poll_us} * 1000), on_lost_(std::move(on_lost)) {}

void NpuCompletion::start() { thread_ = std::thread([this] { run(); }); }

void NpuCompletion::push(PendingLaunch& launch) noexcept {
  launch.next = nullptr;
  {
    std::lock_guard lock(mutex_);
    ++launch.generation;
    if (tail_ != nullptr) tail_->next = &launch;
    else head_ = &launch;
    tail_ = &launch;
  }
  changed_.notify_one();
}

void NpuCompletion::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NpuCompletion::await_unwatched(const PendingLaunch& launch) noexcept {
  while (launch.watchers.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

PendingLaunch* NpuCompletion::watch_head(std::uint64_t& generation) {
  PendingLaunch* launch = head_;
  generation = launch->generation;
  launch->watchers.fetch_add(1, std::memory_order_relaxed);
  return launch;
}

bool NpuCompletion::finish(PendingLaunch& launch, std::uint64_t generation, ze_result_t result) noexcept {
  CompletionSink* sink = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Released under the lock: once popped and reported, the slot may be launched again,
    // and its launch waits for watchers to leave before resetting the fence.
    launch.watchers.fetch_sub(1, std::memory_order_release);
    if (head_ != &launch || launch.generation != generation) return false;
    head_ = launch.next;
    if (head_ == nullptr) tail_ = nullptr;
    sink = launch.sink;
  }
  // The slot may be launched again as soon as its sink is called; `launch` is not
  // touched below.
  report(*sink, result);
  return true;
}

void NpuCompletion::report(CompletionSink& sink, ze_result_t result) noexcept {
  if (result == ZE_RESULT_SUCCESS) {
    sink.on_done();
    return;
  }
  Status status = ze_launch_error(result, "zeFenceHostSynchronize", "waiting for an NPU region");
  if (status.kind() == ErrorKind::DeviceLost && on_lost_) on_lost_(status);
  sink.on_error(std::move(status));
}

CompletionWait NpuCompletion::wait(std::chrono::nanoseconds limit) noexcept {
  PendingLaunch* launch = nullptr;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || head_ == nullptr) return CompletionWait::Idle;
    launch = watch_head(generation);
    ++helpers_;
  }
  const auto timeout = static_cast<std::uint64_t>(limit.count() > 0 ? limit.count() : 0);
  const ze_result_t result = ze_.zeFenceHostSynchronize(launch->fence, timeout);
  const bool gave_up = result == ZE_RESULT_NOT_READY || stopping_.load();
  bool others = false;
  {
    std::lock_guard lock(mutex_);
    others = --helpers_ == 0 && head_ != nullptr;
    if (gave_up) launch->watchers.fetch_sub(1, std::memory_order_release);  // finish() does it otherwise
  }
  if (others) changed_.notify_one();  // the completion thread watches again
  if (gave_up) return stopping_.load() ? CompletionWait::Idle : CompletionWait::TimedOut;
  finish(*launch, generation, result);
  return CompletionWait::Reported;
}

void NpuCompletion::run() noexcept {
  name_this_thread("npu-complete");
  for (;;) {
    PendingLaunch* launch = nullptr;
    std::uint64_t generation = 0;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_.load() || (head_ != nullptr && helpers_ == 0); });
      if (stopping_) return;
      launch = watch_head(generation);
    }
    ze_result_t result = ZE_RESULT_NOT_READY;
    bool helped = false;
    while (result == ZE_RESULT_NOT_READY && !helped) {
      result = ze_.zeFenceHostSynchronize(launch->fence, poll_ns_);
      if (stopping_) {  // abandoned: no sink after stop(), and no watch left behind
        launch->watchers.fetch_sub(1, std::memory_order_release);
        return;
      }
      std::lock_guard lock(mutex_);
      helped = helpers_ > 0;
    }
    if (result == ZE_RESULT_NOT_READY) {  // a helper took over: rest until it leaves
      std::lock_guard lock(mutex_);
      launch->watchers.fetch_sub(1, std::memory_order_release);
      continue;
    }
    finish(*launch, generation, result);
  }
}

}  // namespace accord::devices::level_zero
