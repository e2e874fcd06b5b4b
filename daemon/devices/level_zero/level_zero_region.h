// NpuRegion: a lowered run of NPU-lane operations (in practice one NPU program, since
// the engine gives each NPU operation its own region): per submission slot, a closed
// command list with the buffers bound and the operations recorded, and a fence on the
// device's queue. Owned by the engine's prepared graph; launched by LevelZeroDevice.
// Thread-safety: a slot has at most one launch in flight (RegionRequest::slots), and
// nothing else changes after record().
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "daemon/devices/device.h"
#include "daemon/devices/level_zero/level_zero_completion.h"
#include "daemon/devices/level_zero/level_zero_runtime.h"

namespace accord::devices::level_zero {

// Command lists and fences a region gave up while the device may still be using them
// (a hung launch at teardown): destroying them then is undefined in Level Zero, so they
// are kept until the device has destroyed its queue. Shared by a device and its
// regions. Thread-safe.
class NpuGraveyard {
 public:
  void bury(UniqueZeCommandList list, UniqueZeFence fence) {
    std::lock_guard lock(mutex_);
    lists_.push_back(std::move(list));
    fences_.push_back(std::move(fence));
  }
  // Destroys what was buried. Call only once the queue that used them is gone.
  void clear() {
    std::lock_guard lock(mutex_);
    fences_.clear();
    lists_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<UniqueZeCommandList> lists_;
  std::vector<UniqueZeFence> fences_;
};

class NpuRegion final : public NativeRegion {
 public:
  struct Slot {
    UniqueZeCommandList list;
    UniqueZeFence fence;
    PendingLaunch pending;  // linked into the completion FIFO while in flight
    bool launched = false;  // set by launch(); the engine never launches while destroying
  };

  // Records `request` into one command list per slot, on `npu` of `runtime`, with
  // fences created on `queue`. `owner` identifies the device for launch(). Invalid when
  // an operation is not on the Npu lane, its program belongs to another device, or a
  // binding is missing or too short; errors of the recording calls name the call.
  static Result<std::unique_ptr<NpuRegion>> record(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                   const NpuHandle& npu, ze_command_queue_handle_t queue,
                                                   std::shared_ptr<NpuGraveyard> graveyard, const void* owner,
                                                   const RegionRequest& request);

  // Waits for every thread still inside a wait on a slot's fence to leave it, and (up to
  // 1 s per slot) for the last launch of each slot to finish, so the device no longer
  // uses its list and fence, then destroys them; a slot still running after
  // that (a hung region) is buried in the graveyard instead. The engine releases regions
  // only after shut_down() or once their launches were reported.
  ~NpuRegion() override;

  const void* owner() const noexcept { return owner_; }
  std::size_t slot_count() const noexcept { return slots_.size(); }
  Slot& slot(std::size_t i) noexcept { return slots_[i]; }

 private:
  NpuRegion() = default;

  std::shared_ptr<const LevelZeroRuntime> runtime_;  // keeps the context alive
  std::shared_ptr<NpuGraveyard> graveyard_;
  const void* owner_ = nullptr;
  std::vector<Slot> slots_;
};

}  // namespace accord::devices::level_zero
