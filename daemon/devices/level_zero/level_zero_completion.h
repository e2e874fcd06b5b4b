// NpuCompletion: the one thread per NPU device that observes fences and completes
// sinks, so no thread blocks per submission. Launches on a device go to one in-order
// command queue, so their fences signal in launch order and the thread waits on the
// oldest one only (head of an intrusive FIFO: pushing never allocates).
// Thread-safety: push() from any thread (the device calls it under its queue lock, so
// the FIFO order is the queue's order); start()/stop() from the owner.
#pragma once

#include <level_zero/ze_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "daemon/devices/device.h"
#include "daemon/devices/level_zero/level_zero_symbols.h"

namespace accord::devices::level_zero {

// One launch in flight: embedded in a region's slot, linked while pending.
struct PendingLaunch {
  ze_fence_handle_t fence = nullptr;
  CompletionSink* sink = nullptr;
  PendingLaunch* next = nullptr;
};

class NpuCompletion {
 public:
  // `on_lost` is called (on the completion thread) when a fence reports a lost device.
  NpuCompletion(const ZeSymbols& ze, std::uint32_t poll_us, std::function<void(Status)> on_lost);
  ~NpuCompletion() { stop(); }
  NpuCompletion(const NpuCompletion&) = delete;
  NpuCompletion& operator=(const NpuCompletion&) = delete;

  // Starts the thread. Owner only, once.
  void start();
  // Queues `launch` (its fence and sink set). Never allocates; never blocks on a fence.
  void push(PendingLaunch& launch) noexcept;
  // Stops and joins the thread; pending launches are abandoned, and no sink is called
  // once it returns. Idempotent. Owner only.
  void stop() noexcept;

 private:
  void run() noexcept;

  const ZeSymbols& ze_;
  const std::uint64_t poll_ns_;
  std::function<void(Status)> on_lost_;
  std::mutex mutex_;
  std::condition_variable changed_;
  PendingLaunch* head_ = nullptr;  // guarded by mutex_
  PendingLaunch* tail_ = nullptr;
  std::atomic<bool> stopping_ = false;
  std::thread thread_;
};

}  // namespace accord::devices::level_zero
