// CudaLaunchCombiner: the launches of every CudaDevice of one CUDA context in the process
// (sixteen embedded runtimes share a GPU's primary context) made by one thread at a time,
// a combiner: a caller queues its launch, and whichever caller holds the combiner makes
// every queued launch in order, so that the driver's launch path stays hot on one core
// instead of each tenant's thread taking the context's lock in turn (README.md,
// "Launching"). No thread of its own: the combiner is a caller, and callers that find it
// held wait for their own launch, spinning, never in the driver.
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace accord::devices::cuda {

// How long a combiner that made other callers' launches stays to make more, after its
// queue emptied: a tenant's next submission comes about one graph later, so a short stay
// keeps the role (and the driver's state) on one core across arrivals; `most` bounds the
// whole stay after its own launch, which its own caller pays. A combiner that made only
// its own launch leaves at once: a lone tenant pays nothing.
struct CudaLaunchStay {
  std::chrono::nanoseconds idle{3'000};
  std::chrono::nanoseconds most{15'000};
};

class CudaLaunchCombiner {
 public:
  // One launch to make: `run(context)` is called exactly once, on this thread or the
  // combiner's, and launch() returns after it has. Lives on the caller's stack.
  struct Request {
    void (*run)(void* context) noexcept = nullptr;
    void* context = nullptr;
    std::atomic<bool> done{false};
    Request* next = nullptr;  // the queue's link
  };

  // The combiner of `key` (a CUcontext) for this process, made on first use and kept while
  // a holder has it.
  // The stay is the first holder's.
  static std::shared_ptr<CudaLaunchCombiner> for_key(const void* key, CudaLaunchStay stay = CudaLaunchStay());
  CudaLaunchCombiner() = default;
  explicit CudaLaunchCombiner(CudaLaunchStay stay) : stay_(stay) {}
  CudaLaunchCombiner(const CudaLaunchCombiner&) = delete;
  CudaLaunchCombiner& operator=(const CudaLaunchCombiner&) = delete;

  // Queues `request` and returns once its run() has returned. Callers' launches run one at
  // a time, each caller's in its order, and a launch queued after another returned (from
  // any thread) runs after it. No allocation; no system call.
  void launch(Request& request) noexcept;

  // How many launches were made by a combiner for another caller (for tests and the
  // benchmarks' counters).
  std::uint64_t combined() const noexcept { return combined_.load(std::memory_order_relaxed); }

 private:
  // Runs everything queued, oldest first; returns how many were other callers'.
  std::uint64_t drain(const Request& mine) noexcept;
  void combine(Request& mine) noexcept;

  CudaLaunchStay stay_;
  alignas(64) std::atomic<bool> held_{false};
  alignas(64) std::atomic<Request*> pushed_{nullptr};  // newest first (a Treiber stack)
  alignas(64) std::atomic<std::uint64_t> combined_{0};
};

}  // namespace accord::devices::cuda
