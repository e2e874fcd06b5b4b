// CudaTenantContext: a context of one GPU that some tenants' regions are lowered in and
// launched from (cuda.tenant_contexts), with its stream pools per priority level and the
// writers of its completion flags. Context 0 of a device is the device's own; the others
// are made for the device alone, so that under MPS each is a client of the server of its
// own and tenants spread over them run side by side as MPS processes do (one context
// holds sixteen tenants below that: tests/bench/RESULTS.md, sessions 33-34).
// Thread-safety: ensure_level and the const members are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_flags.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_stream_pool.h"

namespace accord::devices::cuda {

// What every tenant context of one device shares: the driver, the GPU's priority range
// and the pools' size.
struct CudaStreamLevels {
  std::shared_ptr<const CudaSymbols> syms;
  int least_priority = 0;        // CUDA's default (least) stream priority
  std::uint32_t level_count = 1; // priority levels, from the least up
  std::uint32_t streams_per_lane = 16;
  std::string gpu;               // "cuda:0 (...)", for errors
};

class CudaTenantContext {
 public:
  static constexpr std::uint32_t kMaxLevels = 32;  // more than any GPU reports (the H200: 6)

  // `owned`: the context when it was made for this tenant context (empty for the
  // device's own); `flags`: its flag writers (probed), or null.
  CudaTenantContext(std::uint32_t index, CudaContext context, UniqueCuContext owned,
                    std::unique_ptr<CudaFlagPool> flags, const CudaStreamLevels& levels) noexcept
      : index_(index), owned_(std::move(owned)), context_(context), shape_(levels), flags_(std::move(flags)) {}
  CudaTenantContext(const CudaTenantContext&) = delete;
  CudaTenantContext& operator=(const CudaTenantContext&) = delete;

  std::uint32_t index() const noexcept { return index_; }
  const CudaContext& context() const noexcept { return context_; }
  // The writers of this context's completion flags, or null where regions get no flags
  // (none probed, with cuda.completion = event, or the probe found no writer).
  CudaFlagPool* flags() const noexcept { return flags_ != nullptr && flags_->usable() ? flags_.get() : nullptr; }
  // Makes the streams of priority level `level` unless they exist: made when a region of
  // the level is first lowered, so that a context holds streams only for the priorities
  // its tenants use. Errors: the mapped kind of a driver failure, naming the GPU.
  Status ensure_level(std::uint32_t level);
  // The streams of `level`, or null before ensure_level made them. Never blocks.
  const LevelStreams* level(std::uint32_t level) const noexcept {
    return level < kMaxLevels ? levels_[level].load(std::memory_order_acquire) : nullptr;
  }

 private:
  std::uint32_t index_;
  UniqueCuContext owned_;  // destroyed last: everything below lives in it
  CudaContext context_;
  CudaStreamLevels shape_;
  std::unique_ptr<CudaFlagPool> flags_;
  // Published once, read without a lock.
  std::array<std::atomic<const LevelStreams*>, kMaxLevels> levels_{};
  std::mutex levels_mu_;                                           // ensure_level
  std::vector<std::shared_ptr<const LevelStreams>> owned_levels_;  // levels_mu_
};

}  // namespace accord::devices::cuda
