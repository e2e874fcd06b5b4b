// CudaCompletionQueue: one completion thread per GPU that watches the done-events of the
// slots in flight and reports each exactly once to its sink (README.md, "Completion").
// launch() queues a slot (a mutex, two pointer writes, no allocation; a futex wake only
// when the thread waits); the thread polls with cuEventQuery (spinning for a short window
// after progress or a launch, then sleeping with growing pauses), reports successes,
// failed launches and faults, and tells the device when an error is sticky. Thread-safe: push() from any thread; shut_down() once from
// the owner (later calls do nothing).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_region.h"

namespace accord::devices::cuda {

// Told once when the completion thread meets a sticky error (the context is unusable).
class CudaLossObserver {
 public:
  virtual void on_sticky_error(Status cause) noexcept = 0;

 protected:
  ~CudaLossObserver() = default;
};

struct CudaPollOptions {
  std::chrono::microseconds spin{100};       // keep polling without sleeping this long after progress
  std::chrono::microseconds max_sleep{500};  // longest pause between polls when nothing completes
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

  // Queues `slot` (its sink, launch result and event already set by launch()). Never
  // allocates; takes a mutex the completion thread holds only to splice lists.
  void push(CudaSlot& slot) noexcept;

  // Stops and joins the thread. Slots still in flight are abandoned: no sink is called
  // after this returns. Must not be called from the completion thread (a sink).
  void shut_down() noexcept;

 private:
  CudaCompletionQueue(const CudaContext& context, std::string device_name, const CudaPollOptions& options,
                      CudaLossObserver& observer)
      : context_(context), device_name_(std::move(device_name)), options_(options), observer_(observer) {}

  void run() noexcept;
  // Polls the in-flight list once; reports what completed. Returns how many it reported.
  int sweep() noexcept;
  void report(CudaSlot& slot) noexcept;

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

  // Completion thread only: slots in flight, oldest first.
  CudaSlot* head_ = nullptr;
  CudaSlot* tail_ = nullptr;
  bool lost_ = false;

  std::thread thread_;
};

}  // namespace accord::devices::cuda
