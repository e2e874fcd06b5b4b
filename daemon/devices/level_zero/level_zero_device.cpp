// The NPU device: identity, memory, program loading (with its one-time
// initialisation), lowering and launch. See level_zero_device.h for the contract.
#include "daemon/devices/level_zero/level_zero_device.h"

#include <array>
#include <string>

#include "daemon/devices/common/memfd_pages.h"
#include "daemon/devices/level_zero/level_zero_program.h"
#include "daemon/devices/level_zero/level_zero_region.h"
#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {
namespace {

constexpr std::array kLanes{LaneKind::Npu};

// How long load() waits for a program's initialisation before calling it hung.
constexpr std::uint64_t kInitializeTimeoutNs = 60'000'000'000ULL;

struct HostAddressView final : AdmittedMemory {
  explicit HostAddressView(std::byte* address) : address_(address) {}
  std::uint64_t device_address() const noexcept override { return reinterpret_cast<std::uint64_t>(address_); }
  std::byte* address_;
};

}  // namespace

Result<std::unique_ptr<LevelZeroDevice>> LevelZeroDevice::create(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                                  std::size_t npu_index, int ordinal) {
  std::unique_ptr<LevelZeroDevice> device(new LevelZeroDevice());
  const NpuHandle& npu = runtime->npus()[npu_index];
  const NpuDriver& driver = runtime->drivers()[npu.driver];
  const ZeSymbols& ze = runtime->ze();
  device->runtime_ = runtime;
  device->npu_ = &npu;
  device->info_.kind = DeviceKind::Npu;
  device->info_.ordinal = ordinal;
  device->info_.backend = "level_zero";
  device->info_.name = "npu:" + std::to_string(ordinal) + " (" + npu.name + ")";
  device->info_.target = driver.version;
  device->info_.memory_bytes = 0;  // host pages: no memory of its own

  ze_command_queue_desc_t queue_desc{};
  queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  queue_desc.ordinal = 0;
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_command_queue_handle_t queue = nullptr;
  ACCORD_ZE_RETURN_IF_ERROR("zeCommandQueueCreate",
                            ze.zeCommandQueueCreate(driver.context.get(), npu.device, &queue_desc, &queue),
                            "creating the npu lane's queue of " + device->info_.name);
  device->queue_ = UniqueZeCommandQueue(queue, ze.zeCommandQueueDestroy);
  LevelZeroDevice* self = device.get();
  device->completion_ = std::make_unique<NpuCompletion>(ze, runtime->options().poll_us,
                                                        [self](Status cause) { self->report_lost(std::move(cause)); });
  device->completion_->start();
  device->waiter_blocks_ = runtime->options().waiter_blocks;
  return device;
}

LevelZeroDevice::~LevelZeroDevice() {
  shut_down();
  queue_.reset();
  graveyard_->clear();
}

std::span<const LaneKind> LevelZeroDevice::lanes() const noexcept { return kLanes; }

bool LevelZeroDevice::supports(MemoryPlacement placement) const noexcept {
  return (placement.kind() == MemoryPlacement::Kind::NpuLocal || placement.kind() == MemoryPlacement::Kind::Shared) &&
         placement.device() == info_.ordinal;
}

Result<std::unique_ptr<DeviceMemory>> LevelZeroDevice::allocate(const AllocationRequest& request) {
  if (!supports(request.placement))
    return unsupported_error(info_.name + " holds NpuLocal(" + std::to_string(info_.ordinal) + ") and Shared(" +
                             std::to_string(info_.ordinal) + ") memory; " + request.placement.to_string() +
                             " was requested");
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<common::MemfdPages> memory,
                          common::MemfdPages::create(request.bytes, "NPU memory"));
  return std::unique_ptr<DeviceMemory>(std::move(memory));
}

Result<std::unique_ptr<AdmittedMemory>> LevelZeroDevice::admit(const DeviceMemory& memory, const DeviceInfo& home) {
  if (memory.host_address() == nullptr)
    return unsupported_error(info_.name + " cannot reach memory of " + home.id().to_string() + " (" + home.name +
                             "): it is not host mapped");
  return std::unique_ptr<AdmittedMemory>(std::make_unique<HostAddressView>(memory.host_address()));
}

Result<std::unique_ptr<LoadedCode>> LevelZeroDevice::load(const CodeImage& image, const KernelContract& contract) {
  if (image.device != info_.id())
    return unsupported_error(info_.name + " cannot load code for " + image.device.to_string());
  if (image.image.empty())
    return unsupported_error(info_.name + " runs NPU programs only; '" + image.name +
                             "' has no program image (built-in and plugin kernels run on the host)");
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<NpuProgram> program,
                          NpuProgram::create(runtime_, *npu_, image, contract));

  // Initialise once: record pfnAppendGraphInitialize, run it on the lane's queue, wait.
  const ZeSymbols& ze = runtime_->ze();
  const NpuDriver& driver = runtime_->drivers()[npu_->driver];
  const std::string what = "initialising NPU program '" + program->name() + "' on " + info_.name;
  ze_command_list_desc_t list_desc{};
  list_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  ze_command_list_handle_t list_handle = nullptr;
  ACCORD_ZE_RETURN_IF_ERROR("zeCommandListCreate",
                            ze.zeCommandListCreate(driver.context.get(), npu_->device, &list_desc, &list_handle), what);
  UniqueZeCommandList list(list_handle, ze.zeCommandListDestroy);
  ACCORD_ZE_RETURN_IF_ERROR("pfnAppendGraphInitialize",
                            program->table().pfnAppendGraphInitialize(
                                runtime_->translate(ZEL_HANDLE_COMMAND_LIST, list.get()), program->graph(), nullptr,
                                0, nullptr),
                            what);
  ACCORD_ZE_RETURN_IF_ERROR("zeCommandListClose", ze.zeCommandListClose(list.get()), what);
  ze_fence_desc_t fence_desc{};
  fence_desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
  ze_fence_handle_t fence_handle = nullptr;
  ACCORD_ZE_RETURN_IF_ERROR("zeFenceCreate", ze.zeFenceCreate(queue_.get(), &fence_desc, &fence_handle), what);
  UniqueZeFence fence(fence_handle, ze.zeFenceDestroy);
  {
    std::lock_guard lock(queue_mutex_);
    ze_command_list_handle_t lists[] = {list.get()};
    ACCORD_ZE_RETURN_IF_ERROR("zeCommandQueueExecuteCommandLists",
                              ze.zeCommandQueueExecuteCommandLists(queue_.get(), 1, lists, fence.get()), what);
  }
  ACCORD_ZE_RETURN_IF_ERROR("zeFenceHostSynchronize", ze.zeFenceHostSynchronize(fence.get(), kInitializeTimeoutNs),
                            what);
  return std::unique_ptr<LoadedCode>(std::move(program));
}

Result<std::unique_ptr<NativeRegion>> LevelZeroDevice::lower(const RegionRequest& request) {
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<NpuRegion> region,
                          NpuRegion::record(runtime_, *npu_, queue_.get(), graveyard_, this, request));
  return std::unique_ptr<NativeRegion>(std::move(region));
}

void LevelZeroDevice::launch(NativeRegion& region, const RegionWaits& waits, CompletionSink& sink) noexcept {
  // dynamic_cast does not allocate; a foreign region is an engine bug.
  auto* npu_region = dynamic_cast<NpuRegion*>(&region);
  if (npu_region == nullptr || npu_region->owner() != this) {
    sink.on_error(internal_error(info_.name + " was asked to launch another device's region"));
    return;
  }
  if (waits.slot >= npu_region->slot_count()) {
    sink.on_error(internal_error(info_.name + ": launch names slot " + std::to_string(waits.slot) +
                                 " of a region lowered with " + std::to_string(npu_region->slot_count())));
    return;
  }
  NpuRegion::Slot& slot = npu_region->slot(waits.slot);
  const ZeSymbols& ze = runtime_->ze();
  std::lock_guard lock(queue_mutex_);
  // A thread that waited on this slot's previous launch may still be returning from its
  // fence wait; Level Zero does not allow resetting a fence in use.
  NpuCompletion::await_unwatched(slot.pending);
  if (const ze_result_t r = ze.zeFenceReset(slot.fence.get()); r != ZE_RESULT_SUCCESS) {
    sink.on_error(ze_launch_error(r, "zeFenceReset", info_.name));
    return;
  }
  ze_command_list_handle_t list = slot.list.get();
  if (const ze_result_t r = ze.zeCommandQueueExecuteCommandLists(queue_.get(), 1, &list, slot.fence.get());
      r != ZE_RESULT_SUCCESS) {
    sink.on_error(ze_launch_error(r, "zeCommandQueueExecuteCommandLists", info_.name));
    return;
  }
  // Pushed under the queue lock, so the completion FIFO is in queue order.
  slot.launched = true;
  slot.pending.sink = &sink;
  completion_->push(slot.pending);
}

CompletionWait LevelZeroDevice::wait_for_completion(std::chrono::nanoseconds limit) noexcept {
  return completion_ ? completion_->wait(limit) : CompletionWait::Idle;
}

void LevelZeroDevice::shut_down() noexcept {
  if (completion_) completion_->stop();
}

}  // namespace accord::devices::level_zero
