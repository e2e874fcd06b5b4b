// NpuCompletion: observes a device's fences and completes their sinks, so no thread
// blocks per submission. Launches on a device go to one in-order command queue, so their
// fences signal in launch order and only the oldest one is waited on (head of an
// intrusive FIFO: pushing never allocates). The device's completion thread waits, except
// while a *helper* does: a thread waiting for its own submission that blocks on the
// fence itself (wait()), so the fence wakes it directly instead of waking the completion
// thread, which would then wake it (two wake-ups in a row).
// Thread-safety: push() from any thread (the device calls it under its queue lock, so
// the FIFO order is the queue's order); wait() and await_unwatched() from any thread;
// start()/stop() from the owner.
#pragma once

#include <level_zero/ze_api.h>

#include <atomic>
#include <chrono>
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
  // Counts pushes (guarded by the FIFO's mutex): a thread that waited on this launch's
  // fence reports it only if it is still the same launch, not the slot launched again.
  std::uint64_t generation = 0;
  // Threads inside zeFenceHostSynchronize on `fence`; the fence is not reset while any
  // is (await_unwatched()).
  std::atomic<int> watchers = 0;
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
  // A helper's wait: blocks up to `limit` on the oldest launch's fence and reports it on
  // the calling thread (Reported also when another thread reported it first). Idle at
  // once when nothing is in flight; after stop(), Idle and no sink is called.
  CompletionWait wait(std::chrono::nanoseconds limit) noexcept;
  // Returns once no thread waits on `launch`'s fence, so that it may be reset: the
  // launch has been reported, so those threads' waits have ended or are about to.
  static void await_unwatched(const PendingLaunch& launch) noexcept;
  // Stops and joins the thread; pending launches are abandoned, and no sink is called
  // once it returns. Idempotent. Owner only.
  void stop() noexcept;

 private:
  void run() noexcept;
  // Under mutex_: the head and its generation, counted as watched by the caller.
  PendingLaunch* watch_head(std::uint64_t& generation);
  // After a wait on `launch` that returned `result` (not NOT_READY): pops it if it is
  // still the head of that generation, and reports it. Takes mutex_; false when another
  // thread had reported it.
  bool finish(PendingLaunch& launch, std::uint64_t generation, ze_result_t result) noexcept;
  void report(CompletionSink& sink, ze_result_t result) noexcept;

  const ZeSymbols& ze_;
  const std::uint64_t poll_ns_;
  std::function<void(Status)> on_lost_;
  std::mutex mutex_;
  std::condition_variable changed_;
  PendingLaunch* head_ = nullptr;  // guarded by mutex_
  PendingLaunch* tail_ = nullptr;
  int helpers_ = 0;  // guarded by mutex_: threads in wait(); the completion thread rests meanwhile
  std::atomic<bool> stopping_ = false;
  std::thread thread_;
};

}  // namespace accord::devices::level_zero
