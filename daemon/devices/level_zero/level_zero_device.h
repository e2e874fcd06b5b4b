// LevelZeroDevice: one NPU (a Level Zero VPU device) as the engine sees it. One lane
// (Npu) backed by one command queue; memory as memfd pages (NpuLocal, Shared); code is
// NPU programs through the graph extension; regions are command lists executed with a
// fence; completion comes from the device's completion thread (level_zero_completion.h).
// Thread-safety: every member is thread-safe except shut_down(), which the engine
// calls once after draining (a second call is harmless).
#pragma once

#include <memory>
#include <mutex>
#include <span>

#include "daemon/devices/device.h"
#include "daemon/devices/level_zero/level_zero_completion.h"
#include "daemon/devices/level_zero/level_zero_region.h"
#include "daemon/devices/level_zero/level_zero_runtime.h"

namespace accord::devices::level_zero {

class LevelZeroDevice final : public Device {
 public:
  // Opens NPU `npu_index` of `runtime` as ordinal `ordinal`: creates its command queue
  // and starts its completion thread. Errors name the Level Zero call.
  static Result<std::unique_ptr<LevelZeroDevice>> create(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                         std::size_t npu_index, int ordinal);
  // Stops the completion thread, destroys the queue (which abandons hung work), then
  // the lists and fences of hung regions.
  ~LevelZeroDevice() override;

  // kind Npu, backend "level_zero", name "npu:<i> (<device name>)", target the driver
  // version and graph extension version.
  const DeviceInfo& info() const noexcept override { return info_; }
  // {Npu}.
  std::span<const LaneKind> lanes() const noexcept override;
  // NpuLocal(ordinal) and Shared(ordinal).
  bool supports(MemoryPlacement placement) const noexcept override;
  bool launches_synchronously() const noexcept override { return false; }

  // memfd pages (common/memfd_pages.h). Unsupported for other placements.
  Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) override;
  // Any host-mapped memory (HostVisible, another device's Shared) is admitted as is: the
  // NPU uses the host address. Unsupported when `memory` has no host address.
  Result<std::unique_ptr<AdmittedMemory>> admit(const DeviceMemory& memory, const DeviceInfo& home) override;
  // An NPU program: `image.image` is the blob (README.md). Creates the graph, checks the
  // contract (NpuProgram::create) and runs its initialisation once on this device's
  // queue. Unsupported when the image is empty or names another device.
  Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image, const KernelContract& contract) override;
  // Records the run per slot (NpuRegion::record).
  Result<std::unique_ptr<NativeRegion>> lower(const RegionRequest& request) override;
  // Executes the slot's command list with its fence; the completion thread reports.
  // Never allocates; takes the queue lock only (Level Zero queues are single-caller).
  void launch(NativeRegion& region, const RegionWaits& waits, CompletionSink& sink) noexcept override;
  // Stops the completion thread: no sink is called once it returns; in-flight launches
  // are abandoned.
  void shut_down() noexcept override;
  // A waiting thread blocks on the oldest fence itself (NpuCompletion::wait).
  bool completes_by_waiting() const noexcept override { return waiter_blocks_; }
  CompletionWait wait_for_completion(std::chrono::nanoseconds limit) noexcept override;

 private:
  LevelZeroDevice() = default;

  std::shared_ptr<const LevelZeroRuntime> runtime_;
  const NpuHandle* npu_ = nullptr;
  DeviceInfo info_;
  UniqueZeCommandQueue queue_;
  // Lists and fences of hung regions, destroyed after queue_ (level_zero_region.h).
  std::shared_ptr<NpuGraveyard> graveyard_ = std::make_shared<NpuGraveyard>();
  std::mutex queue_mutex_;  // Level Zero: one caller at a time per command queue
  std::unique_ptr<NpuCompletion> completion_;
  bool waiter_blocks_ = true;  // LevelZeroOptions::waiter_blocks
};

}  // namespace accord::devices::level_zero
