// CudaCompletionQueue: watches the slots in flight on one GPU and reports each exactly
// once to its sink (README.md, "Completion"). A slot is done when its completion flag
// reads 1 (a load), or, for a graph without a completion tail, when its event is; a flag
// that has not come after a while is explained by asking the event, which returns the
// error of a faulted context. Sweeps are made by the queue's own thread and by waiting
// threads that help (poll()): one at a time, whoever gets there first.
// Thread-safety: push() and poll() from any thread; shut_down() once from the owner (later
// calls do nothing).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_region.h"

namespace accord::devices::cuda {

// Told once when a sweep meets a sticky error (the context is unusable).
class CudaLossObserver {
 public:
  virtual void on_sticky_error(Status cause) noexcept = 0;

 protected:
  ~CudaLossObserver() = default;
};

struct CudaPollOptions {
  std::chrono::microseconds spin{100};       // keep polling without sleeping this long after progress
  std::chrono::microseconds max_sleep{500};  // longest pause between polls when nothing completes
  // How long a flag may be missing before the event is asked why (a fault shows there).
  std::chrono::microseconds event_check{1000};
};

class CudaCompletionQueue {
 public:
  // Starts the thread, which makes `context` current before anything else. `observer`
  // must outlive *this. Errors: Internal when the thread cannot start.
  static Result<std::unique_ptr<CudaCompletionQueue>> start(const CudaContext& context, std::string device_name,
                                                           const CudaPollOptions& options, CudaLossObserver& observer);
  ~CudaCompletionQueue() { shut_down(); }
  CudaCompletionQueue(const CudaCompletionQueue&) = delete;
  CudaCompletionQueue& operator=(const CudaCompletionQueue&) = delete;

  // Queues `slot` (its sink, launch result, flag and event already set by launch()); a
  // failed launch's flag is set to kFlagReleased first. Never allocates; takes a mutex
  // that sweeps hold only to splice lists.
  void push(CudaSlot& slot) noexcept;

  // One sweep on the calling thread, unless another sweep is under way; reports what
  // completed through the sinks, here. Marks the queue as helped, so its own thread rests
  // instead of competing. Returns how many slots it reported. Call with no lock held that
  // a sink may take. Does nothing after shut_down().
  int poll() noexcept;

  // Stops and joins the thread. Slots still in flight are abandoned: no sink is called
  // after this returns. Must not be called from a sink.
  void shut_down() noexcept;

 private:
  CudaCompletionQueue(const CudaContext& context, std::string device_name, const CudaPollOptions& options,
                      CudaLossObserver& observer)
      : context_(context), device_name_(std::move(device_name)), options_(options), observer_(observer) {}

  void run() noexcept;
  // With the sweep taken: moves pushed slots behind those in flight. Returns whether any came.
  bool splice_incoming() noexcept;
  // With the sweep taken: looks at every slot in flight once; reports what completed.
  // Returns how many it reported.
  int sweep() noexcept;
  void report(CudaSlot& slot) noexcept;
  bool try_take_sweep() noexcept { return !sweeping_.exchange(true, std::memory_order_acquire); }
  void give_back_sweep() noexcept { sweeping_.store(false, std::memory_order_release); }

  const CudaContext context_;
  const std::string device_name_;
  const CudaPollOptions options_;
  CudaLossObserver& observer_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool waiting_ = false;  // the thread waits (idle, or pausing between polls): push() notifies
  CudaSlot* incoming_head_ = nullptr;
  CudaSlot* incoming_tail_ = nullptr;
  std::atomic<std::uint32_t> in_flight_{0};  // pushed and not yet reported
  std::atomic<bool> stopped_{false};
  std::atomic<std::int64_t> helped_at_ns_{0};  // steady clock of the last poll() by a helper

  // Whoever holds the sweep (sweeping_ true) owns these: slots in flight, oldest first.
  std::atomic<bool> sweeping_{false};
  CudaSlot* head_ = nullptr;
  CudaSlot* tail_ = nullptr;
  bool lost_ = false;

  std::thread thread_;
};

// Nanoseconds on the steady clock, as CudaSlot::launched_ns and the queue keep time.
inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace accord::devices::cuda
