// CudaFlagPool: completion flags, 32-bit words in pinned host memory mapped into the GPU.
// A region's graph ends by writing its slot's flag (a one-thread kernel, or a memory-
// operation node, after a system-wide fence), so whoever waits sees completion with a
// plain load: no driver call, so neither the lock inside the driver nor a thread wake-up
// stands between the GPU finishing and the waiter knowing (README.md, "Completion").
// The pages come from one memfd (the word arena) where it can be made, so that a process
// the fd is passed to (accordd, when this backend runs in a GPU executor) sees the same
// words: NativeRegion::completion_word.
// Thread-safety: probe() runs once, before anything else; after it, acquire(), release()
// and the const members (append_tail, retarget_tail, the queries) are thread-safe. A
// flag's word is written by the GPU and by the one launch that owns its slot (and by
// accordd before it asks for that launch), and read by any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/common/memfd_pages.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

inline constexpr std::uint64_t kNoWordOffset = ~std::uint64_t{0};

// A flag's values: 0 from launch; kFlagDone when the graph wrote it; kFlagReleased when
// the launch failed, so that successors already queued on the flag (their streams wait
// for at least kFlagDone) go on rather than stall their stream, while every reader that
// reports completion takes only kFlagDone and leaves the failure to the launch's report.
inline constexpr std::uint32_t kFlagDone = kCompletionWordDone;
inline constexpr std::uint32_t kFlagReleased = 2;

struct CudaFlag {
  std::atomic<std::uint32_t>* word = nullptr;  // the host's view
  CUdeviceptr device_address = 0;              // the GPU's view of the same word
  std::uint64_t arena_offset = kNoWordOffset;  // where the word lies in the arena, if it does

  explicit operator bool() const noexcept { return word != nullptr; }
};

// What writes a region's flag (cuda.flag_write; README.md, "Completion").
//   Kernel: a one-thread kernel node (built in, JIT-compiled from PTX once per context)
//     that fences at system scope and stores the value. On the H200 a thread launching 16
//     graphs of 10 small kernels kept in flight reached 389,000-420,000 graphs/s with it,
//     246,000-264,000 with the memory operation (tests/bench/RESULTS.md, session 21).
//   EarlyKernel: the same kernel, launched as soon as the region's last kernels have begun
//     (a programmatic edge from their launch-order port) and waiting on the GPU for them
//     to end (griddepcontrol.wait, sm_90 and later), so that its launch is off the path of
//     every graph. Only where every sink of the region is a kernel; elsewhere Kernel.
//   MemoryOp: a stream memory-operation node (cuGraphAddBatchMemOpNode) with the driver's
//     system-wide fence. It needs no SM, so it also ends graphs without kernels when
//     Kernel is chosen (CudaFlagPool::append_tail).
enum class CudaFlagWriter { Kernel, EarlyKernel, MemoryOp };

// The nodes that end a region's graph: `write` stores 1 to a flag after every node in
// `sinks` (with a system-wide fence, so the region's results are visible first), and,
// when an event is given, `record` then records it. Successors on this GPU wait on the
// event, or on the flag itself where there is none: either way a successor never starts
// before its predecessor's flag is written.
struct CompletionTail {
  CUgraphNode write = nullptr;
  CUgraphNode record = nullptr;  // null when the tail records no event
  CudaFlagWriter writer = CudaFlagWriter::MemoryOp;  // what `write` is
};

class CudaFlagPool {
 public:
  explicit CudaFlagPool(const CudaContext& context) noexcept : context_(context) {}
  // Writers for another context of the same GPU whose flags come from `words` (its
  // acquire, release and arena): one arena of completion words per device, whichever
  // context a region runs in. `words` must be probed first and outlive this pool.
  CudaFlagPool(const CudaContext& context, CudaFlagPool& words) noexcept : context_(context), words_(&words) {}
  CudaFlagPool(const CudaFlagPool&) = delete;
  CudaFlagPool& operator=(const CudaFlagPool&) = delete;

  // True when the driver has what flags need (pinned mapped allocations, a way to write
  // them from a graph, event-record graph nodes), checked once for the memory operation
  // and, unless `preferred` (CudaDeviceOptions::flag_write) is MemoryOp, for the kernel
  // and, when it is EarlyKernel, for its early variant: by building a graph whose tail
  // writes a flag, instantiating it, pointing it at another flag and launching it.
  // Blocks. Call once, before any other member.
  bool probe(CudaFlagWriter preferred) noexcept;
  bool usable() const noexcept { return usable_; }
  // What probe() settled on for regions with kernels: `preferred` where it works.
  CudaFlagWriter writer() const noexcept { return writer_; }
  // True when a stream can wait on a flag (cuStreamWaitValue32 on the mapped word), also
  // checked by probe(): successors then need no event.
  bool waitable() const noexcept { return waitable_; }

  // Adds the tail to `graph`; `event` may be null (no record node). A graph whose
  // completion must not wait for an SM (`off_the_sms`: copies and fills only, or a session
  // above the default priority, whose tail would otherwise queue behind a neighbour's
  // blocks) is ended by the memory operation where it works even when writer() is Kernel.
  // Errors: the mapped kind of a driver failure, naming `what`.
  Result<CompletionTail> append_tail(CUgraph graph, const std::vector<CUgraphNode>& sinks, CudaFlag flag,
                                     CUevent event, bool off_the_sms, const std::string& what) const;
  // Points the tail of an instantiation at another flag and event (one per slot);
  // `event` is ignored when the tail records none.
  Status retarget_tail(CUgraphExec exec, const CompletionTail& tail, CudaFlag flag, CUevent event,
                       const std::string& what) const;

  // A free flag, zeroed. Allocates a page of flags when none is free (prepare time
  // only). Errors: Unsupported when !usable(); the mapped kind of a driver failure.
  Result<CudaFlag> acquire();
  // Returns `flag` for reuse; no launch that writes it may be in flight.
  void release(CudaFlag flag) noexcept;

  // The memfd of the word arena, or -1 when there is none (it could not be made, or no
  // flag was acquired yet: probe() acquires one). Borrowed.
  int arena_fd() const noexcept;

 private:
  // One flag per cache line: waiters of different slots do not share a line the GPU writes.
  static constexpr std::size_t kStride = 64;
  static constexpr std::size_t kPageBytes = 4096;
  // 16,384 flags; pages are registered (and the kernel backs them) only as they are used.
  // Past it, flags come from cuMemHostAlloc and have no arena offset.
  static constexpr std::size_t kArenaBytes = std::size_t{1} << 20;

  // With mu_ held: a new page of flags, from the arena while it has room. The mapped kind
  // of a driver failure.
  Status add_page();
  // Whether a graph whose tail `writer` writes reaches the flag here, pointed at another
  // flag than the one it was built with, and whether a stream can then wait on it.
  struct Probed {
    bool works = false;
    bool waitable = false;
  };
  Probed try_writer(CudaFlagWriter writer) noexcept;
  Result<CompletionTail> append_tail_as(CudaFlagWriter writer, CUgraph graph, const std::vector<CUgraphNode>& sinks,
                                        CudaFlag flag, CUevent event, const std::string& what) const;
  // Loads the built-in flag kernel into this context (Kernel), and with `early` its
  // variant that waits for its programmatic predecessors (EarlyKernel). Blocks.
  Status load_flag_kernel(bool early);
  // The kernel `writer` launches (Kernel or EarlyKernel).
  CUfunction kernel_of(CudaFlagWriter writer) const noexcept {
    return writer == CudaFlagWriter::EarlyKernel ? early_flag_kernel_ : flag_kernel_;
  }
  // Whether EarlyKernel's programmatic edges can follow `sinks`: every one a kernel node,
  // and the driver able to add such edges. Otherwise a region's tail is Kernel's.
  bool takes_early_edges(const std::vector<CUgraphNode>& sinks) const noexcept;

  const CudaContext context_;
  CudaFlagPool* const words_ = nullptr;  // where flags come from when not from here
  bool usable_ = false;
  bool waitable_ = false;
  CudaFlagWriter writer_ = CudaFlagWriter::MemoryOp;
  bool memory_op_works_ = false;  // probed: what ends graphs without kernels
  UniqueCuModule flag_module_;      // Kernel: the built-in module
  CUfunction flag_kernel_ = nullptr;
  UniqueCuModule early_flag_module_;  // EarlyKernel: the sm_90 module
  CUfunction early_flag_kernel_ = nullptr;
  mutable std::mutex mu_;
  bool arena_tried_ = false;
  std::unique_ptr<common::MemfdPages> arena_;          // declared before its registrations:
  std::size_t arena_used_ = 0;                         // they are undone first
  std::vector<UniqueCuHostRegistration> registrations_;
  std::vector<UniqueCuHostAlloc> pages_;
  std::vector<CudaFlag> free_;
};

}  // namespace accord::devices::cuda
