// Completion. Why polling and not cuLaunchHostFunc callbacks: (1) a host function "will
// not be called in the event of an error in the CUDA context" (cuda.h), so a fault would
// leave its region unreported until the engine's 60 s watchdog, while cuEventQuery returns
// the sticky error at once; (2) host functions on independent streams run in undefined
// order, while a sweep reports a region's same-device predecessors before it. Why flags
// first and events only when a flag is late: a flag is a load, an event query a driver
// call under the context's lock, which every launch of every tenant also takes. Why
// helpers: the thread that waits for a region sees its flag the moment it lands, where
// the queue's thread would have to wake it (a futex round trip, 5-10 us).
#include "daemon/devices/cuda/cuda_completion.h"

#include <algorithm>
#include <utility>

#include "daemon/devices/cuda/cuda_status.h"
#include "client/api/thread_name.h"

namespace accord::devices::cuda {

Result<std::unique_ptr<CudaCompletionQueue>> CudaCompletionQueue::start(const CudaContext& context,
                                                                         std::string device_name,
                                                                         const CudaPollOptions& options,
                                                                         CudaLossObserver& observer) {
  std::unique_ptr<CudaCompletionQueue> queue(
      new CudaCompletionQueue(context, std::move(device_name), options, observer));
  try {
    queue->thread_ = std::thread([q = queue.get()] { q->run(); });
  } catch (const std::system_error& e) {
    return internal_error("cuda: cannot start the completion thread of " + queue->device_name_ + ": " + e.what());
  }
  return queue;
}

void CudaCompletionQueue::push(CudaSlot& slot) noexcept {
  // A launch that failed never writes its flag, and successors may already be queued on
  // it: release them (kFlagReleased), before the slot can be reported and launched again.
  if (slot.launch_result != CUDA_SUCCESS && slot.flag) slot.flag.word->store(kFlagReleased, std::memory_order_release);
  slot.ready = false;
  slot.next = nullptr;
  bool wake = false;
  {
    const std::lock_guard lock(mu_);
    slot.prev = incoming_tail_;
    if (incoming_tail_ != nullptr)
      incoming_tail_->next = &slot;
    else
      incoming_head_ = &slot;
    incoming_tail_ = &slot;
    in_flight_.fetch_add(1, std::memory_order_release);
    wake = waiting_;
  }
  // Only a waiting thread needs the futex call; a polling one finds the slot at its next sweep.
  if (wake) wake_.notify_one();
}

int CudaCompletionQueue::poll() noexcept {
  // Nothing in flight: one load, so that idle helpers (accordd's spinning ring pollers)
  // cost nothing and leave this queue's thread alone. The clock read below and the lock
  // in splice_incoming() look avoidable, but taking them out lost 5-13% of sixteen
  // embedded tenants' graphs on an H100: their looks end in sched_yield when no core is
  // spare, and faster looks yielded more often (tests/bench/RESULTS.md, session 25).
  if (stopped_.load(std::memory_order_acquire) || in_flight_.load(std::memory_order_acquire) == 0) return 0;
  helped_at_ns_.store(steady_now_ns(), std::memory_order_relaxed);
  if (!try_take_sweep()) return 0;
  splice_incoming();
  const int reported = sweep();
  give_back_sweep();
  return reported;
}

void CudaCompletionQueue::shut_down() noexcept {
  if (stopped_.exchange(true, std::memory_order_acq_rel)) return;  // the second call: done already
  {
    const std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  // Wait out a helper inside a sweep, and keep the sweep: no sink is called from here on.
  while (!try_take_sweep()) std::this_thread::yield();
}

void CudaCompletionQueue::run() noexcept {
  name_this_thread("cuda-complete");
  // Every thread that calls into the backend makes the device's context current. If even
  // that fails, event queries below fail too and report the cause.
  static_cast<void>(context_.make_current());
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_progress = Clock::now();
  std::chrono::microseconds pause{0};
  const std::int64_t rest_ns = std::chrono::nanoseconds(options_.spin).count();
  for (;;) {
    {
      std::unique_lock lock(mu_);
      const auto woken = [this] { return stop_ || incoming_head_ != nullptr; };
      if (in_flight_.load(std::memory_order_relaxed) == 0 && !stop_) {
        waiting_ = true;
        wake_.wait(lock, [this] { return stop_ || in_flight_.load(std::memory_order_relaxed) != 0; });
        waiting_ = false;
        last_progress = Clock::now();  // new work reopens the spin window
        pause = std::chrono::microseconds{0};
      } else if (pause.count() > 0 && !stop_ && incoming_head_ == nullptr) {
        waiting_ = true;  // a launch ends the pause: new work may be short
        wake_.wait_for(lock, pause, woken);
        waiting_ = false;
      }
      if (stop_) return;  // abandon what is in flight: no sink after shut_down()
    }
    // A waiting thread is sweeping for itself (and reports every slot it finds done):
    // rest rather than compete with it for the sweep and for a core. If it stops
    // helping, sweeps resume within one rest. Not a wait on wake_: launches would then
    // pay a futex call to signal a thread that has nothing to do.
    if (steady_now_ns() - helped_at_ns_.load(std::memory_order_relaxed) < rest_ns) {
      std::this_thread::sleep_for(options_.max_sleep);
      continue;
    }
    if (!try_take_sweep()) {
      std::this_thread::yield();
      continue;
    }
    const bool fresh = splice_incoming();
    const int reported = sweep();
    give_back_sweep();
    if (fresh || reported > 0) {
      last_progress = Clock::now();
      pause = std::chrono::microseconds{0};
    } else if (Clock::now() - last_progress < options_.spin) {
      std::this_thread::yield();
    } else {
      pause = std::clamp(pause * 2, std::chrono::microseconds{10}, options_.max_sleep);
    }
  }
}

bool CudaCompletionQueue::splice_incoming() noexcept {
  const std::lock_guard lock(mu_);
  if (incoming_head_ == nullptr) return false;
  incoming_head_->prev = tail_;
  if (tail_ != nullptr)
    tail_->next = incoming_head_;
  else
    head_ = incoming_head_;
  tail_ = incoming_tail_;
  incoming_head_ = incoming_tail_ = nullptr;
  return true;
}

int CudaCompletionQueue::sweep() noexcept {
  // Look newest to oldest, report oldest to newest. A successor was launched after its
  // predecessors and cannot finish before them (its graph waits on their flags, or on
  // their events, which are recorded after their flags), so if it is seen done, they are
  // seen done too (looked at later), and they are reported first. A late slot with a
  // stream is checked with cuStreamQuery: the stream may hold later launches too, but the
  // answer is wanted only for its error (a faulted context answers its sticky error), or
  // for SUCCESS, which means this slot's graph has ended as well.
  const std::int64_t event_check_ns = std::chrono::nanoseconds(options_.event_check).count();
  std::int64_t now = 0;  // read once, and only when a flag is missing
  CUcontext current = nullptr;
  for (CudaSlot* s = tail_; s != nullptr; s = s->prev) {
    if (s->launch_result != CUDA_SUCCESS) {
      s->ready = true;
      continue;
    }
    if (s->flag) {
      if (s->flag.word->load(std::memory_order_acquire) == kFlagDone) {
        s->ready = true;
        continue;
      }
      if (now == 0) now = steady_now_ns();
      if (now - s->checked_ns < event_check_ns) continue;
      s->checked_ns = now;  // late: the event says whether it faulted
    }
    // A helper's thread may have another context current, and the slot's region may run
    // in another context of the GPU than the device's own (cuda.tenant_contexts).
    if (const CUcontext wanted = s->context != nullptr ? s->context : context_.context; current != wanted) {
      static_cast<void>(context_.syms->cuCtxSetCurrent(wanted));
      current = wanted;
    }
    const CUresult result = s->stream != nullptr ? context_.syms->cuStreamQuery(s->stream)
                                                 : context_.syms->cuEventQuery(s->done.get());
    if (result == CUDA_ERROR_NOT_READY) continue;
    s->polled = result;
    s->ready = true;
  }
  int reported = 0;
  for (CudaSlot* s = head_; s != nullptr;) {
    CudaSlot* next = s->next;
    if (s->ready) {
      // Unlink before reporting: once its sink returns, the slot may be launched again.
      (s->prev != nullptr ? s->prev->next : head_) = s->next;
      (s->next != nullptr ? s->next->prev : tail_) = s->prev;
      s->prev = s->next = nullptr;
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      report(*s);
      ++reported;
    }
    s = next;
  }
  return reported;
}

void CudaCompletionQueue::report(CudaSlot& slot) noexcept {
  CompletionSink* sink = std::exchange(slot.sink, nullptr);
  if (std::atomic<std::uint32_t>* launches = std::exchange(slot.stream_launches, nullptr))
    launches->fetch_sub(1, std::memory_order_relaxed);
  const CUresult launch_result = std::exchange(slot.launch_result, CUDA_SUCCESS);
  const CUresult polled = std::exchange(slot.polled, CUDA_SUCCESS);
  slot.ready = false;
  if (launch_result == CUDA_SUCCESS && polled == CUDA_SUCCESS) {
    sink->on_done();  // may destroy the region's owner: no access to `slot` below
    return;
  }
  const CUresult error = launch_result != CUDA_SUCCESS ? launch_result : polled;
  const char* call = launch_result != CUDA_SUCCESS ? slot.launch_call
                     : slot.stream != nullptr     ? "cuStreamQuery"
                                                  : "cuEventQuery";
  const std::string what = launch_result != CUDA_SUCCESS ? "launching a region on " + device_name_
                                                         : "a region running on " + device_name_;
  Status status = cuda_status(context_.syms, error, call, what);
  // A region that failed is Execution (or DeviceLost when the device itself went away),
  // never Busy or Invalid: those kinds describe requests, not runs.
  if (status.kind() != ErrorKind::Execution && status.kind() != ErrorKind::DeviceLost)
    status = execution_error(std::string(status.message()));
  const bool sticky = cuda_error_is_sticky(error);
  Status cause = sticky && !lost_ ? device_lost_error(device_name_ + " is lost: " + std::string(status.message()))
                                  : Status();
  // The device is reported lost before the region fails, so whoever handles the failure
  // already sees the device lost.
  if (!cause.ok()) {
    lost_ = true;
    observer_.on_sticky_error(std::move(cause));
  }
  sink->on_error(std::move(status));  // may destroy the region's owner: no access to `slot` below
}

}  // namespace accord::devices::cuda
