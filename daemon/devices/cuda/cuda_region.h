// CudaRegion: a run of same-lane operations lowered into one CUDA graph (ARCHITECTURE.md,
// devices: cuda; lowering). Kernel nodes carry the kernel's fixed launch shape and a
// parameter buffer of binding addresses followed by the contract's constants; copies are
// memcpy nodes, fills memset nodes; the only edges are the request's (no false
// chaining). The graph is instantiated once per submission slot. Where the driver allows,
// the graph ends with a completion tail (cuda_flags.h): it writes the slot's flag, which
// successors on this device wait on (or, where they cannot wait on a flag or the device
// asks for it, it then records the slot's event, and successors wait on that); otherwise
// launch() records the event after the graph and the completion thread polls it.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "daemon/devices/cuda/cuda_flags.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

// One submission slot of a region: what launch() needs, preallocated at lower() so a
// launch allocates nothing, and the completion state the completion thread owns while
// the slot is in flight (cuda_completion.h). A slot has at most one launch in flight.
struct CudaSlot {
  UniqueCuGraphExec exec;
  UniqueCuEvent done;  // recorded after every launch in this slot, unless successors wait on the flag
  CudaFlag flag;       // written 1 by the graph's tail; empty when the graph has no tail
  CUcontext context = nullptr;  // the region's: current for the completion thread's queries

  // --- in flight: written by launch() before the slot is queued, then owned by the
  // completion thread until it reports ---
  CompletionSink* sink = nullptr;
  CUresult launch_result = CUDA_SUCCESS;  // a launch call that failed, reported as such
  const char* launch_call = nullptr;      // its name
  // Where the slot records no event: the stream of its launch, which a late flag is
  // checked against (cuStreamQuery). Null: the event is checked (cuEventQuery).
  CUstream stream = nullptr;
  // The launch count of the pooled stream it was launched on (CudaDevice's pools), given
  // back when the slot is reported, so that the next launch can find an idle stream.
  std::atomic<std::uint32_t>* stream_launches = nullptr;
  CUresult polled = CUDA_SUCCESS;         // the answer of that check
  std::int64_t checked_ns = 0;            // steady clock of the launch or of the last event check
  bool ready = false;
  CudaSlot* prev = nullptr;  // intrusive links of the completion queue
  CudaSlot* next = nullptr;
};

class CudaRegion final : public NativeRegion {
 public:
  // Builds and instantiates the graph of `request` in `context`. Blocks (graph
  // instantiation: a few µs per node per slot). Thread-safe. Errors: Invalid for 0
  // slots, a lane other than Upload/Compute/Download or one that differs from the first
  // operation's, a malformed operation (binding count, lengths, a binding with no
  // address on this GPU, code another backend loaded), an edge that does not point
  // forward; the mapped kind of a driver failure. Messages name the operation. With a
  // usable `flags` pool (null: none), every slot gets a flag and the graph a completion
  // tail, which also records the slot's event when `tail_event` is set or streams cannot
  // wait on flags; `flags` must outlive the region.
  // `tenant_context`: which of the device's contexts `context` is (CudaTenantContext).
  static Result<std::unique_ptr<CudaRegion>> lower(const CudaContext& context, const RegionRequest& request,
                                                   CudaFlagPool* flags, bool tail_event,
                                                   std::uint32_t tenant_context = 0);

  // Frees the graph, its instantiations and events, and returns the flags. No launch may
  // be in flight.
  ~CudaRegion() override;

  // True when the graph writes each slot's flag and records its event itself.
  bool has_completion_tail() const noexcept { return has_tail_; }
  // True when the tail records no event: successors wait on the slot's flag.
  bool successors_wait_on_flag() const noexcept { return has_tail_ && !tail_event_; }
  // What writes the flag (CudaFlagPool::append_tail); nullopt without a tail.
  std::optional<CudaFlagWriter> tail_writer() const noexcept {
    return has_tail_ ? std::optional<CudaFlagWriter>(tail_writer_) : std::nullopt;
  }

  LaneKind lane() const noexcept { return lane_; }
  // RegionRequest::priority as lowered; the device picks its stream pool from it.
  int priority() const noexcept { return priority_; }
  // The device's tenant context the region was lowered in, and is launched from.
  std::uint32_t tenant_context() const noexcept { return tenant_context_; }
  std::uint32_t slot_count() const noexcept { return slot_count_; }
  // The pool index of the stream of the region's last launch, which the next launch
  // takes again while it is idle (CudaDevice::take_stream); ~0u before the first launch.
  std::atomic<std::uint32_t>& last_stream() noexcept { return last_stream_; }
  CudaSlot& slot(std::uint32_t index) noexcept { return slots_[index]; }
  // The slot's flag, where it lies in the flag pool's arena (CudaFlagPool::arena_fd()).
  std::optional<std::uint64_t> completion_word(std::uint32_t index) const noexcept override {
    if (index >= slot_count_ || !slots_[index].flag || slots_[index].flag.arena_offset == kNoWordOffset)
      return std::nullopt;
    return slots_[index].flag.arena_offset;
  }
  const CudaSlot& slot(std::uint32_t index) const noexcept { return slots_[index]; }

 private:
  CudaRegion() = default;

  LaneKind lane_ = LaneKind::Compute;
  int priority_ = 0;
  std::uint32_t tenant_context_ = 0;
  bool has_tail_ = false;
  bool tail_event_ = false;
  CudaFlagWriter tail_writer_ = CudaFlagWriter::MemoryOp;
  CudaFlagPool* flags_ = nullptr;
  UniqueCuGraph graph_;
  std::uint32_t slot_count_ = 0;
  std::unique_ptr<CudaSlot[]> slots_;  // stable addresses: the completion queue links them
  std::atomic<std::uint32_t> last_stream_{~std::uint32_t{0}};  // relaxed: a hint, launches of slots may race
};

}  // namespace accord::devices::cuda
