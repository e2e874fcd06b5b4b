// The CUDA device: identity, resources, and the launch path. The launch path is the one
// place with hard rules (device.h): noexcept, no allocation, no blocking on other work,
// so failures there are recorded as a CUresult in the slot and described later by the
// completion thread.
#include "daemon/devices/cuda/cuda_device.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "daemon/devices/cuda/cuda_code.h"
#include "daemon/devices/cuda/cuda_imported_memory.h"
#include "daemon/devices/cuda/cuda_peer_admission.h"
#include "daemon/devices/cuda/cuda_region.h"
#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

namespace {

// Where the search for an idle stream starts, turned by every launch that does not take
// its region's last stream again, across every CudaDevice of the process: sixteen
// embedded runtimes each open the GPU with pools of their own, and their regions' first
// picks would otherwise all be their pools' first stream.
std::atomic<std::uint32_t> g_stream_turn{0};

std::string format_uuid(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

// The context `choice` asks for on `handle`; the primary one is made current on the
// calling thread.
Result<UniqueCuContext> open_context(const CudaSymbols& s, CUdevice handle, CudaContextChoice choice,
                                     const std::string& gpu) {
  bool own = choice == CudaContextChoice::Own;
  if (choice == CudaContextChoice::Auto && s.cuCtxCreate != nullptr && s.cuCtxDestroy != nullptr) {
    // Drivers older than the attribute say CUDA_ERROR_INVALID_VALUE: no MPS known.
    int mps = 0;
    own = s.cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, handle) == CUDA_SUCCESS && mps != 0;
  }
  if (own) {
    if (s.cuCtxCreate == nullptr || s.cuCtxDestroy == nullptr)
      return unsupported_error("cuda: option cuda.context = own: this driver has no cuCtxCreate (" + gpu + ")");
    CUcontext created = nullptr;
    const CUresult r = s.cuCtxCreate(&created, nullptr, 0, handle);
    if (r == CUDA_SUCCESS) return UniqueCuContext::created(s, handle, created);
    // An MPS server that takes no more clients: "auto" shares the primary context.
    if (choice == CudaContextChoice::Own)
      return cuda_status(&s, r, "cuCtxCreate", "creating a context of its own on " + gpu);
  }
  CUcontext primary = nullptr;
  ACCORD_CU_RETURN_IF_ERROR(s, cuDevicePrimaryCtxRetain(&primary, handle), "retaining the primary context of " + gpu);
  UniqueCuContext retained = UniqueCuContext::primary(s, handle, primary);
  ACCORD_CU_RETURN_IF_ERROR(s, cuCtxSetCurrent(primary), "making the context of " + gpu + " current");
  return retained;
}

}  // namespace

Result<std::unique_ptr<CudaDevice>> CudaDevice::open(std::shared_ptr<const CudaSymbols> syms, int ordinal,
                                                     const CudaDeviceOptions& options) {
  const CudaSymbols& s = *syms;
  const std::string gpu = "gpu:" + std::to_string(ordinal);
  auto device = std::unique_ptr<CudaDevice>(new CudaDevice());
  device->syms_ = std::move(syms);
  device->completion_mode_ = options.completion;

  CUdevice handle = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceGet(&handle, ordinal), "opening " + gpu);
  ACCORD_ASSIGN_OR_RETURN(device->owned_context_, open_context(s, handle, options.context, gpu));
  const CUcontext context = device->owned_context_.get();
  device->context_ = CudaContext{&s, handle, context, ordinal};

  char name[256] = {};
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceGetName(name, sizeof(name) - 1, handle), "asking the name of " + gpu);
  int major = 0;
  int minor = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
                            "asking the compute capability of " + gpu);
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
                            "asking the compute capability of " + gpu);
  std::size_t total = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceTotalMem(&total, handle), "asking the memory size of " + gpu);
  CUuuid uuid{};
  ACCORD_CU_RETURN_IF_ERROR(s, cuDeviceGetUuid(&uuid, handle), "asking the UUID of " + gpu);
  int exportable = 0;
  ACCORD_CU_RETURN_IF_ERROR(
      s, cuDeviceGetAttribute(&exportable, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, handle),
      "asking whether " + gpu + " exports memory as file descriptors");

  device->sm_ = major * 10 + minor;
  device->uuid_ = format_uuid(uuid);
  device->info_.kind = DeviceKind::Gpu;
  device->info_.ordinal = ordinal;
  device->info_.backend = "cuda";
  device->info_.name = "cuda:" + std::to_string(ordinal) + " (" + name + ")";
  device->info_.target = sm_name(device->sm_);
  device->info_.memory_bytes = total;
  device->info_.uuid = device->uuid_;

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  prop.requestedHandleTypes = exportable != 0 ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  std::size_t granularity = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                            "asking the allocation granularity of " + gpu);
  device->memory_config_.granularity = granularity;
  device->memory_config_.exportable = exportable != 0;

  CUstream stream = nullptr;
  if (const CUresult r = create_stream(s, &stream, 0); r != CUDA_SUCCESS)
    return cuda_status(&s, r, "cuStreamCreateWithPriority", "creating the zeroing stream of " + gpu);
  device->zero_stream_ = UniqueCuStream(s, context, stream);
  device->memory_config_.zero_stream = stream;
  // One pool per priority level, from the default (least) priority up to the greatest,
  // each made when a region of its level is first lowered in a tenant context
  // (CudaTenantContext::ensure_level).
  // CUDA numbers priorities downwards: `greatest` is <= `least` (e.g. 0 and -5).
  int least = 0;
  int greatest = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuCtxGetStreamPriorityRange(&least, &greatest),
                            "asking the stream priority range of " + gpu);
  const std::uint32_t levels = least >= greatest ? static_cast<std::uint32_t>(least - greatest + 1) : 1;
  device->stream_levels_ = CudaStreamLevels{device->syms_, least, std::min(levels, CudaTenantContext::kMaxLevels),
                                            options.streams_per_lane, device->info_.name};
  device->tenant_context_count_ = std::clamp<std::uint32_t>(options.tenant_contexts, 1, kMaxTenantContexts);
  // Registered host pages (HostVisible admissions, completion flags) are asked their
  // device address in the device's own context only: other contexts may use it where the
  // GPU takes host pointers for registered memory, as every GPU with unified addressing
  // does. Elsewhere every session stays in the device's own context.
  int host_pointers = 0;
  if (device->tenant_context_count_ > 1 &&
      (s.cuDeviceGetAttribute(&host_pointers, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, handle) !=
           CUDA_SUCCESS ||
       host_pointers == 0))
    device->tenant_context_count_ = 1;
  device->flag_write_ = options.flag_write;
  // Completion flags where the driver writes them from a graph; events polled otherwise.
  auto flags = std::make_unique<CudaFlagPool>(device->context_);
  // With cuda.completion = event no region takes a flag: nothing to probe (or compile).
  if (options.completion != CudaCompletionMode::Event) flags->probe(options.flag_write);
  auto own = std::make_unique<CudaTenantContext>(0, device->context_, UniqueCuContext(), std::move(flags),
                                                 device->stream_levels_);
  device->tenant_contexts_[0].store(own.get(), std::memory_order_release);
  device->owned_tenant_contexts_.push_back(std::move(own));
  ACCORD_ASSIGN_OR_RETURN(device->completion_,
                          CudaCompletionQueue::start(device->context_, gpu, options.poll, *device));
  return device;
}

CudaDevice::~CudaDevice() {
  shut_down();
  // The others' flags come from the first one's words: the last made goes first.
  while (!owned_tenant_contexts_.empty()) owned_tenant_contexts_.pop_back();
}

std::span<const LaneKind> CudaDevice::lanes() const noexcept { return kCudaLanes; }

bool CudaDevice::supports(MemoryPlacement placement) const noexcept {
  return placement == MemoryPlacement::gpu_local(info_.ordinal);
}

Result<std::unique_ptr<DeviceMemory>> CudaDevice::allocate(const AllocationRequest& request) {
  if (!supports(request.placement))
    return unsupported_error(info_.name + " is the home of GpuLocal(" + std::to_string(info_.ordinal) +
                             ") memory only; " + request.placement.to_string() + " was requested");
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaMemory> memory,
                          CudaMemory::create(context_, request.bytes, memory_config_));
  return std::unique_ptr<DeviceMemory>(std::move(memory));
}

Result<std::unique_ptr<AdmittedMemory>> CudaDevice::admit(const DeviceMemory& memory, const DeviceInfo& home) {
  if (memory.host_address() != nullptr) {
    ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaHostAdmission> admission, CudaHostAdmission::create(context_, memory));
    return std::unique_ptr<AdmittedMemory>(std::move(admission));
  }
  const std::string whose = home.id().to_string() + " (" + home.name + ")";
  // Only a CudaMemory carries the context that tells which GPU of this process it is on;
  // a GpuLocal allocation of another GPU executor reaches this process as the fd that
  // executor exported (ExecutorServer's admit), which is imported.
  if (const auto* gpu_memory = dynamic_cast<const CudaMemory*>(&memory); gpu_memory != nullptr) {
    ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaPeerAdmission> admission,
                            CudaPeerAdmission::create(context_, *gpu_memory, info_.name, whose));
    return std::unique_ptr<AdmittedMemory>(std::move(admission));
  }
  // Only another CUDA GPU's export is a VMM handle; another backend's fd (a dma-buf) is not.
  if (home.kind == DeviceKind::Gpu && home.backend == info_.backend && memory.export_fd() >= 0) {
    ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaImportedMemory> imported,
                            CudaImportedMemory::import(context_, memory.export_fd(), memory.bytes(), home.ordinal));
    return std::unique_ptr<AdmittedMemory>(std::move(imported));
  }
  if (home.kind == DeviceKind::Gpu)
    return unsupported_error(info_.name + " cannot reach memory of " + whose +
                             ": it is neither host mapped, nor CUDA memory of this process, nor exported");
  return unsupported_error(info_.name + " cannot reach memory of " + whose + ": it is not host mapped");
}

Result<std::unique_ptr<LoadedCode>> CudaDevice::load(const CodeImage& image, const KernelContract& contract) {
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaCode> code, CudaCode::load(context_, sm_, image, contract, tenant_context_count_ > 1));
  return std::unique_ptr<LoadedCode>(std::move(code));
}

std::uint32_t CudaDevice::level_of(int priority) const noexcept {
  // Priority > 0 climbs towards the greatest CUDA priority; 0 and below use the default.
  const std::uint32_t level = priority > 0 ? static_cast<std::uint32_t>(priority) : 0;
  return std::min(level, stream_levels_.level_count - 1);
}

CudaTenantContext* CudaDevice::tenant_context_for(std::uint64_t tenant) {
  const auto index =
      tenant == 0 ? 0u : static_cast<std::uint32_t>((tenant - 1) % tenant_context_count_);
  if (CudaTenantContext* made = tenant_contexts_[index].load(std::memory_order_acquire)) return made;
  const std::lock_guard lock(tenant_mu_);
  if (CudaTenantContext* made = tenant_contexts_[index].load(std::memory_order_relaxed)) return made;
  CudaTenantContext* const own = tenant_contexts_[0].load(std::memory_order_relaxed);
  CUcontext created = nullptr;
  if (syms_->cuCtxCreate == nullptr || syms_->cuCtxDestroy == nullptr ||
      syms_->cuCtxCreate(&created, nullptr, 0, context_.device) != CUDA_SUCCESS) {
    // No more contexts (an MPS server at its clients or connections, or any other
    // refusal): its tenants share the device's own, as every tenant does with one
    // context, for the device's life.
    tenant_contexts_[index].store(own, std::memory_order_release);
    return own;
  }
  UniqueCuContext owned = UniqueCuContext::created(*syms_, context_.device, created);
  const CudaContext context{syms_.get(), context_.device, created, context_.ordinal};
  std::unique_ptr<CudaFlagPool> flags;
  if (CudaFlagPool* words = own->flags(); words != nullptr) {
    flags = std::make_unique<CudaFlagPool>(context, *words);
    flags->probe(flag_write_);
  }
  auto made = std::make_unique<CudaTenantContext>(index, context, std::move(owned), std::move(flags), stream_levels_);
  CudaTenantContext* published = made.get();
  owned_tenant_contexts_.push_back(std::move(made));
  tenant_contexts_[index].store(published, std::memory_order_release);
  return published;
}

Result<std::unique_ptr<NativeRegion>> CudaDevice::lower(const RegionRequest& request) {
  CudaTenantContext* const tenant = tenant_context_for(request.tenant);
  // The streams its launches will take exist before the first launch, which makes none.
  ACCORD_RETURN_IF_ERROR(tenant->ensure_level(level_of(request.priority)));
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaRegion> region,
                          CudaRegion::lower(tenant->context(), request, tenant->flags(),
                                            completion_mode_ == CudaCompletionMode::FlagAndEvent, tenant->index()));
  return std::unique_ptr<NativeRegion>(std::move(region));
}

PooledStream& CudaDevice::take_stream(const LevelStreams& pools, LaneKind lane,
                                                  std::atomic<std::uint32_t>& last) noexcept {
  const auto lane_index = static_cast<std::size_t>(lane);  // Upload 0, Compute 1, Download 2 (lane.h)
  const std::vector<std::unique_ptr<PooledStream>>& pool = pools.lanes[lane_index];
  const auto size = static_cast<std::uint32_t>(pool.size());
  if (const std::uint32_t preferred = last.load(std::memory_order_relaxed); preferred < size) {
    std::uint32_t launches = 0;
    if (pool[preferred]->launches.compare_exchange_strong(launches, 1, std::memory_order_relaxed))
      return *pool[preferred];
  }
  const std::uint32_t start = g_stream_turn.fetch_add(1, std::memory_order_relaxed);
  std::uint32_t least = start % size;
  std::uint32_t least_launches = ~std::uint32_t{0};
  for (std::uint32_t i = 0; i < size; ++i) {
    const std::uint32_t at = (start + i) % size;
    PooledStream& candidate = *pool[at];
    std::uint32_t launches = candidate.launches.load(std::memory_order_relaxed);
    if (launches == 0 && candidate.launches.compare_exchange_strong(launches, 1, std::memory_order_relaxed)) {
      last.store(at, std::memory_order_relaxed);
      return candidate;
    }
    if (launches < least_launches) {
      least = at;
      least_launches = launches;
    }
  }
  // Every stream is busy: the one with the fewest launches in flight, the first in turn
  // among equals.
  pool[least]->launches.fetch_add(1, std::memory_order_relaxed);
  last.store(least, std::memory_order_relaxed);
  return *pool[least];
}

void CudaDevice::launch(NativeRegion& native, const RegionWaits& waits, CompletionSink& sink) noexcept {
  auto& region = static_cast<CudaRegion&>(native);
  // The engine never names a slot outside [0, slots); fold rather than index out of bounds.
  CudaSlot& slot = region.slot(waits.slot < region.slot_count() ? waits.slot : 0);
  slot.sink = &sink;
  slot.launch_result = CUDA_SUCCESS;
  const CudaSymbols& s = *syms_;
  // lower() made the region's context and level; a region of another device may find
  // neither.
  const CudaTenantContext* tenant =
      region.tenant_context() < kMaxTenantContexts
          ? tenant_contexts_[region.tenant_context()].load(std::memory_order_acquire)
          : nullptr;
  const LevelStreams* pools = tenant != nullptr ? tenant->level(level_of(region.priority())) : nullptr;
  if (pools == nullptr) {
    slot.launch_result = CUDA_ERROR_INVALID_HANDLE;
    slot.launch_call = "launch (the region was not lowered on this device)";
    completion_->push(slot);
    return;
  }
  PooledStream& pooled = take_stream(*pools, region.lane(), region.last_stream());
  slot.stream_launches = &pooled.launches;
  const CUstream stream = pooled.stream.get();
  auto fail = [&](CUresult result, const char* call) {
    slot.launch_result = result;
    slot.launch_call = call;
  };
  if (const CUresult r = tenant->context().make_current(); r != CUDA_SUCCESS) {
    fail(r, "cuCtxSetCurrent");
  } else {
    for (const RegionWait& wait : waits.predecessors) {
      const auto& predecessor = static_cast<const CudaRegion&>(*wait.region);
      const CudaSlot& before = predecessor.slot(wait.slot);
      // The predecessor's slot is not launched again before this submission ends, so its
      // flag cannot be reset under this wait.
      if (predecessor.successors_wait_on_flag()) {
        if (const CUresult w = s.cuStreamWaitValue32(stream, before.flag.device_address, kFlagDone, CU_STREAM_WAIT_VALUE_GEQ);
            w != CUDA_SUCCESS) {
          fail(w, "cuStreamWaitValue32");
          break;
        }
      } else if (const CUresult w = s.cuStreamWaitEvent(stream, before.done.get(), CU_EVENT_WAIT_DEFAULT);
                 w != CUDA_SUCCESS) {
        fail(w, "cuStreamWaitEvent");
        break;
      }
    }
    if (slot.launch_result == CUDA_SUCCESS) {
      // The slot's previous launch has been reported, so nothing else writes the flag now;
      // the launch call orders this store before the GPU's write.
      if (slot.flag) slot.flag.word->store(0, std::memory_order_release);
      slot.stream = region.successors_wait_on_flag() ? stream : nullptr;
      slot.checked_ns = steady_now_ns();
      if (const CUresult l = s.cuGraphLaunch(slot.exec.get(), stream); l != CUDA_SUCCESS)
        fail(l, "cuGraphLaunch");
      else if (!region.has_completion_tail())
        if (const CUresult e = s.cuEventRecord(slot.done.get(), stream); e != CUDA_SUCCESS) fail(e, "cuEventRecord");
    }
  }
  completion_->push(slot);
}

void CudaDevice::poll_completions() noexcept {
  if (completion_) completion_->poll();
}

CudaFlagPool* CudaDevice::flags_in_use() const noexcept {
  // The device's own context's: every other context's flags come from its words.
  const CudaTenantContext* own = tenant_contexts_[0].load(std::memory_order_acquire);
  return own != nullptr ? own->flags() : nullptr;
}

std::optional<CudaFlagWriter> CudaDevice::flag_writer() const noexcept {
  const CudaFlagPool* flags = flags_in_use();
  return flags != nullptr ? std::optional<CudaFlagWriter>(flags->writer()) : std::nullopt;
}

int CudaDevice::completion_word_fd() const noexcept {
  const CudaFlagPool* flags = flags_in_use();
  return flags != nullptr ? flags->arena_fd() : -1;
}

void CudaDevice::shut_down() noexcept {
  if (completion_) completion_->shut_down();
}

Result<std::uint64_t> CudaDevice::free_memory_bytes() const {
  ACCORD_CU_RETURN_IF_ERROR(*syms_, cuCtxSetCurrent(context_.context), "asking the free memory of " + info_.name);
  std::size_t free = 0;
  std::size_t total = 0;
  ACCORD_CU_RETURN_IF_ERROR(*syms_, cuMemGetInfo(&free, &total), "asking the free memory of " + info_.name);
  return static_cast<std::uint64_t>(free);
}

std::uint64_t CudaDevice::free_memory() const noexcept {
  auto free = free_memory_bytes();
  return free.ok() ? free.value() : 0;
}

void CudaDevice::on_sticky_error(Status cause) noexcept { report_lost(std::move(cause)); }

}  // namespace accord::devices::cuda
