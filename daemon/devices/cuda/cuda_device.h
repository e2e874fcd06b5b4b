// CudaDevice: one NVIDIA GPU as a Device, driven through the CUDA driver API opened at
// run time (ARCHITECTURE.md, devices: cuda). It owns its context (the GPU's retained
// primary context, or one of its own: cuda.context), the contexts its sessions are spread
// over (cuda.tenant_contexts), a small pool of non-blocking streams per lane in each, a
// zeroing stream and the completion thread. Memory is VMM GpuLocal; HostVisible pages are admitted by registration, other
// GPUs' memory by peer access; code is PTX / cubin / fatbin checked against its
// contract; a region is a CUDA graph per slot, launched asynchronously with native waits
// on same-device predecessors.
// Thread-safety: every member is thread-safe, except shut_down() (once, by the owner).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_completion.h"
#include "daemon/devices/cuda/cuda_flags.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_image.h"
#include "daemon/devices/cuda/cuda_memory.h"
#include "daemon/devices/cuda/cuda_options.h"
#include "daemon/devices/cuda/cuda_stream_pool.h"
#include "daemon/devices/cuda/cuda_tenant_context.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

class CudaDevice final : public Device, private CudaLossObserver {
 public:
  // Opens GPU `ordinal` of the driver `syms`: takes its context (cuda.context), reads its
  // identity, creates its streams and starts its completion thread. `options` must have
  // passed validate(). Blocks. Errors: the mapped kind of a driver failure, naming the
  // GPU and the call.
  static Result<std::unique_ptr<CudaDevice>> open(std::shared_ptr<const CudaSymbols> syms, int ordinal,
                                                  const CudaDeviceOptions& options);
  // Calls shut_down(), then releases the tenant contexts, streams and its context. Regions and
  // memory of this device must be gone already (the engine's order).
  ~CudaDevice() override;

  // kind Gpu, the CUDA ordinal, backend "cuda", name "cuda:N (<device name>)", target
  // "sm_XY" from the compute capability, memory_bytes the total memory.
  const DeviceInfo& info() const noexcept override { return info_; }
  // Upload, Compute and Download.
  std::span<const LaneKind> lanes() const noexcept override;
  // True for GpuLocal(this ordinal) only.
  bool supports(MemoryPlacement placement) const noexcept override;
  bool waits_natively() const noexcept override { return true; }
  bool launches_synchronously() const noexcept override { return false; }
  // free_memory_bytes(), or 0 when the driver cannot say (a lost context).
  std::uint64_t free_memory() const noexcept override;

  // GpuLocal: CudaMemory (VMM, granularity-rounded, zeroed, exportable). Invalid for 0
  // bytes; Unsupported for another placement; Busy when the GPU is out of memory.
  Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) override;
  // Host-mapped memory: registered pages (CudaHostAdmission, one registration shared
  // with the other GPUs that admit them). GpuLocal memory of another GPU of this process
  // (a CudaMemory): peer access (CudaPeerAdmission), Unsupported naming both GPUs when
  // the driver reports no peer path. GpuLocal memory of a CUDA GPU met only as its
  // exported fd (a GPU executor's, passed by ExecutorServer): imported
  // (CudaImportedMemory). Anything else Unsupported naming `home`.
  Result<std::unique_ptr<AdmittedMemory>> admit(const DeviceMemory& memory, const DeviceInfo& home) override;
  // A GPU image (CodeImage::image non-empty): CudaCode::load, which lists the errors.
  // Builtin or plugin kernels: Unsupported.
  Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image, const KernelContract& contract) override;
  // CudaRegion::lower, which lists the errors.
  Result<std::unique_ptr<NativeRegion>> lower(const RegionRequest& request) override;
  // Makes the context current, waits (cuStreamWaitEvent) on each predecessor's slot
  // event, clears the slot's flag, cuGraphLaunch on a stream of the region's lane (the
  // graph's tail writes the flag and records the event; without a tail launch() records
  // the event) and queues the slot for completion. Never allocates or
  // blocks on other work. A failed call is reported by the completion thread as
  // Execution naming it (and the device lost when the error is sticky).
  void launch(NativeRegion& region, const RegionWaits& waits, CompletionSink& sink) noexcept override;
  // Completions are seen by reading flags: a waiting thread may look itself.
  bool completes_by_polling() const noexcept override { return true; }
  // One sweep of the slots in flight on the calling thread (CudaCompletionQueue::poll).
  void poll_completions() noexcept override;
  // Stops and joins the completion thread; launches in flight are abandoned. Harmless
  // twice.
  // The flag pool's arena while regions get flags (not with cuda.completion = event).
  int completion_word_fd() const noexcept override;
  void shut_down() noexcept override;

  // --- for the API to come (ListDevices, placement by free memory) ---
  // The GPU's UUID as NVIDIA tools print it ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
  const std::string& uuid() const noexcept { return uuid_; }
  // Free device memory now (cuMemGetInfo). Errors: the mapped kind of the failure.
  Result<std::uint64_t> free_memory_bytes() const;
  // The allocation granularity GpuLocal sizes are rounded to.
  std::size_t granularity() const noexcept { return memory_config_.granularity; }
  SmVersion sm() const noexcept { return sm_; }
  // What writes regions' completion flags in the device's own context, as probed at open
  // (cuda.flag_write, or the memory operation where the kernel's tail failed); nullopt
  // when flags are not used. Each tenant context probes its own and may settle elsewhere.
  std::optional<CudaFlagWriter> flag_writer() const noexcept;
  // Whether this device works in a context of its own (cuda.context) rather than the
  // GPU's primary context.
  bool owns_context() const noexcept { return owned_context_.created(); }
  // The GPU's driver, device and context, borrowed while *this lives: what
  // CudaImportedMemory::import takes to map another process's memory for this GPU.
  const CudaContext& context() const noexcept { return context_; }

 private:
  CudaDevice() = default;
  void on_sticky_error(Status cause) noexcept override;
  // The flag pool when regions get flags (probed and usable), else nullptr.
  CudaFlagPool* flags_in_use() const noexcept;
  // The pool level of session priority `priority` (see stream_levels_).
  std::uint32_t level_of(int priority) const noexcept;
  // The tenant context of `tenant` (RegionRequest::tenant), made unless it exists (the
  // device's own when the driver refuses another); never null. Thread-safe; blocks while
  // it makes one.
  CudaTenantContext* tenant_context_for(std::uint64_t tenant);
  // A pooled stream of `lane` from `pools`, its launch count already taken: the one at
  // pool index `last` (the region's last launch) when it has no launch in flight, else one
  // with no launch in flight if there is one, so that submissions of different sessions
  // run side by side; otherwise the one with the fewest. Stores the index taken in `last`.
  PooledStream& take_stream(const LevelStreams& pools, LaneKind lane, std::atomic<std::uint32_t>& last) noexcept;

  std::shared_ptr<const CudaSymbols> syms_;
  UniqueCuContext owned_context_;  // released last of the native handles
  CudaContext context_;
  DeviceInfo info_;
  std::string uuid_;
  SmVersion sm_ = 0;
  CudaMemoryConfig memory_config_;
  UniqueCuStream zero_stream_;
  // Stream pools per priority level (cuda_stream_pool.h): level 0 is the CUDA default
  // (least) priority, level L the L-th step towards the greatest priority
  // cuCtxGetStreamPriorityRange reports. A session priority p maps to level
  // clamp(p, 0, levels - 1): negative priorities share the default pool (CUDA has nothing
  // below it). A launch takes its region's last stream again when that one is idle, else
  // the first idle stream from a position that turns round-robin (the least busy when
  // none is idle); a stream's count of launches in flight comes back when its slot is
  // reported. Taking the same stream again lifted 16 embedded runtimes from
  // 316,844-318,394 to 332,784-336,284 graphs/s on the H200 (RESULTS.md, session 22).
  // Sessions share a device's pools, and a launch on a busy stream waits for the work
  // ahead of it there: with 4 streams per lane (the old default) taken in turn, 16
  // client processes of one accordd ran at most 4 graphs at a time (118,000 graphs/s on
  // the H200, where 16 processes under MPS reached 411,000).
  // Each tenant context makes a level's streams when a region of the level is first
  // lowered there (CudaTenantContext::ensure_level), so that a process holds streams
  // only for the priorities it uses (under MPS, a client's streams take the server's
  // resources: 16 embedded runtimes with an executor each, and a standby, at 288 streams
  // each, could not all make a context).
  CudaStreamLevels stream_levels_;
  // Where regions are lowered and launched (cuda.tenant_contexts): [0] is made at open in
  // the device's own context and holds the completion words; tenant t's regions go to
  // context (t - 1) % tenant_context_count_, made when first needed (or [0] again when
  // the driver refuses another context). Published once, read without a lock; owned in
  // order of making, destroyed in reverse (the others' flags come from [0]'s).
  static constexpr std::uint32_t kMaxTenantContexts = 48;  // an MPS server's clients per GPU
  std::array<std::atomic<CudaTenantContext*>, kMaxTenantContexts> tenant_contexts_{};
  std::mutex tenant_mu_;                                                    // tenant_context_for
  std::vector<std::unique_ptr<CudaTenantContext>> owned_tenant_contexts_;   // tenant_mu_
  std::uint32_t tenant_context_count_ = 1;
  CudaFlagWriter flag_write_ = CudaFlagWriter::EarlyKernel;  // probed again in each new context
  CudaCompletionMode completion_mode_ = CudaCompletionMode::Flag;  // CudaDeviceOptions::completion
  std::unique_ptr<CudaCompletionQueue> completion_;  // stopped first
};

}  // namespace accord::devices::cuda
