// CudaFlagPool: completion flags, 32-bit words in pinned host memory mapped into the GPU.
// A region's graph ends by writing its slot's flag (a memory-operation node, after a
// system-wide fence), so whoever waits sees completion with a plain load: no driver call,
// so neither the lock inside the driver nor a thread wake-up stands between the GPU
// finishing and the waiter knowing (README.md, "Completion").
// Thread-safety: acquire() and release() are thread-safe; a flag's word is written by the
// GPU and by the one launch that owns its slot, and read by any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_handles.h"

namespace accord::devices::cuda {

struct CudaFlag {
  std::atomic<std::uint32_t>* word = nullptr;  // the host's view
  CUdeviceptr device_address = 0;              // the GPU's view of the same word

  explicit operator bool() const noexcept { return word != nullptr; }
};

// The nodes that end a region's graph: `write` stores 1 to a flag after every node in
// `sinks` (with a system-wide fence, so the region's results are visible first), and,
// when an event is given, `record` then records it. Successors on this GPU wait on the
// event, or on the flag itself where there is none: either way a successor never starts
// before its predecessor's flag is written.
struct CompletionTail {
  CUgraphNode write = nullptr;
  CUgraphNode record = nullptr;  // null when the tail records no event
};
// Adds the tail to `graph`; `event` may be null (no record node). Errors: the mapped kind
// of a driver failure, naming `what`.
Result<CompletionTail> append_completion_tail(const CudaContext& context, CUgraph graph,
                                              const std::vector<CUgraphNode>& sinks, CudaFlag flag, CUevent event,
                                              const std::string& what);
// Points the tail of an instantiation at another flag and event (one per slot); `event`
// is ignored when the tail records none.
Status retarget_completion_tail(const CudaContext& context, CUgraphExec exec, const CompletionTail& tail,
                                      CudaFlag flag, CUevent event, const std::string& what);

class CudaFlagPool {
 public:
  explicit CudaFlagPool(const CudaContext& context) noexcept : context_(context) {}
  CudaFlagPool(const CudaFlagPool&) = delete;
  CudaFlagPool& operator=(const CudaFlagPool&) = delete;

  // True when the driver has what flags need (pinned mapped allocations, memory-operation
  // and event-record graph nodes), checked once by building and instantiating a graph
  // that writes a flag. Blocks.
  bool probe() noexcept;
  bool usable() const noexcept { return usable_; }
  // True when a stream can wait on a flag (cuStreamWaitValue32 on the mapped word), also
  // checked by probe(): successors then need no event.
  bool waitable() const noexcept { return waitable_; }

  // A free flag, zeroed. Allocates a page of flags when none is free (prepare time
  // only). Errors: Unsupported when !usable(); the mapped kind of a driver failure.
  Result<CudaFlag> acquire();
  // Returns `flag` for reuse; no launch that writes it may be in flight.
  void release(CudaFlag flag) noexcept;

 private:
  // One flag per cache line: waiters of different slots do not share a line the GPU writes.
  static constexpr std::size_t kStride = 64;
  static constexpr std::size_t kPageBytes = 4096;

  const CudaContext context_;
  bool usable_ = false;
  bool waitable_ = false;
  std::mutex mu_;
  std::vector<UniqueCuHostAlloc> pages_;
  std::vector<CudaFlag> free_;
};

}  // namespace accord::devices::cuda
