// The completion thread. It waits on the oldest fence in slices of poll_us, so a hung
// region (the emulator's stall hook, a wedged NPU) never keeps stop() waiting longer
// than one slice; the engine's watchdog is what fails the hung region itself.
#include "daemon/devices/level_zero/level_zero_completion.h"

#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {

NpuCompletion::NpuCompletion(const ZeSymbols& ze, std::uint32_t poll_us, std::function<void(Status)> on_lost)
    : ze_(ze), poll_ns_(std::uint64_t{poll_us} * 1000), on_lost_(std::move(on_lost)) {}

void NpuCompletion::start() { thread_ = std::thread([this] { run(); }); }

void NpuCompletion::push(PendingLaunch& launch) noexcept {
  launch.next = nullptr;
  {
    std::lock_guard lock(mutex_);
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

void NpuCompletion::run() noexcept {
  for (;;) {
    PendingLaunch* launch = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_.load() || head_ != nullptr; });
      if (stopping_) return;
      launch = head_;
    }
    ze_result_t result = ZE_RESULT_NOT_READY;
    while (result == ZE_RESULT_NOT_READY) {
      result = ze_.zeFenceHostSynchronize(launch->fence, poll_ns_);
      if (stopping_) return;  // abandoned: no sink after stop()
    }
    CompletionSink* sink = launch->sink;
    {
      std::lock_guard lock(mutex_);
      head_ = launch->next;
      if (head_ == nullptr) tail_ = nullptr;
    }
    // The slot may be launched again as soon as its sink is called; `launch` is not
    // touched below.
    if (result == ZE_RESULT_SUCCESS) {
      sink->on_done();
      continue;
    }
    Status status = ze_launch_error(result, "zeFenceHostSynchronize", "waiting for an NPU region");
    if (status.kind() == ErrorKind::DeviceLost && on_lost_) on_lost_(status);
    sink->on_error(std::move(status));
  }
}

}  // namespace accord::devices::level_zero
