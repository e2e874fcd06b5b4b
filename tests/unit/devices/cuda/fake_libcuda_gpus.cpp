// Working fake GPUs for the stand-in driver (fake_libcuda_gpus.h). Contexts are the
// addresses of a static array, so the current context (thread-local, as in the driver)
// tells which GPU a call is made for; VMM handles and addresses come from counters;
// exported handles are real memfds (CudaMemory closes them), and an import finds the
// GPU an fd was exported from by its inode. A registered host range answers a device
// pointer of host + ordinal * 2^44, so a test sees in whose context it was asked.
// Controlled at run time through accord_fake_cuda_control (below) rather than the
// environment, which the devices' completion threads must not read while a test
// changes it.
#include "tests/unit/devices/cuda/fake_libcuda_gpus.h"

#include <cuda.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace accord_fake_cuda {
namespace {

constexpr int kMaxGpus = 8;
int g_contexts[kMaxGpus];
thread_local int t_current = -1;  // ordinal of the current context, -1 for none

struct State {
  std::mutex mu;
  int gpus = 0;
  bool peer = true;
  std::string fail;  // the entry point that fails with CUDA_ERROR_INVALID_VALUE
  std::vector<std::string> log;
  std::map<const void*, std::size_t> registered;  // host ranges
  std::map<CUmemGenericAllocationHandle, int> handles;  // VMM handle -> home ordinal
  std::map<ino_t, int> exported;  // inode of an exported fd -> home ordinal
  CUmemGenericAllocationHandle next_handle = 0x100;
  CUdeviceptr next_address = 0x7e0000000000ull;
};

State& state() {
  static State* const s = new State();  // never destroyed: completion threads may call late
  return *s;
}

std::string n(std::uint64_t v) { return std::to_string(v); }
std::string n(const void* p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p)); }

// Logs `line` unless `call` is the one told to fail; true when it must fail.
bool fails(const char* call, const std::string& line = {}) {
  State& s = state();
  const std::lock_guard lock(s.mu);
  if (s.fail == call) return true;
  if (!line.empty()) s.log.push_back(std::string(call) + " " + line);
  return false;
}

CUresult device_get(CUdevice* device, int ordinal) {
  if (fails("cuDeviceGet")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(state().mu);
  if (ordinal < 0 || ordinal >= state().gpus) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult primary_retain(CUcontext* context, CUdevice device) {
  *context = reinterpret_cast<CUcontext>(&g_contexts[device]);
  return CUDA_SUCCESS;
}
CUresult primary_release(CUdevice) { return CUDA_SUCCESS; }
CUresult ctx_set_current(CUcontext context) {
  const auto* p = reinterpret_cast<const int*>(context);
  t_current = p >= g_contexts && p < g_contexts + kMaxGpus ? static_cast<int>(p - g_contexts) : -1;
  return CUDA_SUCCESS;
}
CUresult device_name(char* name, int length, CUdevice device) {
  std::snprintf(name, static_cast<std::size_t>(length), "Fake GPU %d", device);
  return CUDA_SUCCESS;
}
CUresult device_attribute(int* value, CUdevice_attribute attribute, CUdevice) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *value = 1; break;
    default: *value = 0;
  }
  return CUDA_SUCCESS;
}
CUresult device_total_mem(std::size_t* bytes, CUdevice) {
  *bytes = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult device_uuid(CUuuid* uuid, CUdevice device) {
  std::memset(uuid->bytes, device, sizeof(uuid->bytes));
  return CUDA_SUCCESS;
}
CUresult can_access_peer(int* can, CUdevice device, CUdevice peer) {
  if (fails("cuDeviceCanAccessPeer", n(static_cast<std::uint64_t>(device)) + " " + n(static_cast<std::uint64_t>(peer))))
    return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(state().mu);
  *can = state().peer && device != peer ? 1 : 0;
  return CUDA_SUCCESS;
}
CUresult priority_range(int* least, int* greatest) {
  *least = 0;
  *greatest = -1;
  return CUDA_SUCCESS;
}
CUresult granularity(std::size_t* bytes, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) {
  *bytes = std::size_t{2} << 20;
  return CUDA_SUCCESS;
}
CUresult mem_get_info(std::size_t* free, std::size_t* total) {
  *free = *total = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
// A stream is an int holding what cuStreamQuery answers (fake_libcuda.cpp).
CUresult stream_create(CUstream* stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new int(CUDA_SUCCESS));
  return CUDA_SUCCESS;
}
CUresult stream_create_with_priority(CUstream* stream, unsigned flags, int) { return stream_create(stream, flags); }
CUresult stream_destroy(CUstream stream) {
  delete reinterpret_cast<int*>(stream);
  return CUDA_SUCCESS;
}
CUresult success() { return CUDA_SUCCESS; }

CUresult mem_create(CUmemGenericAllocationHandle* handle, std::size_t bytes, const CUmemAllocationProp* prop,
                    unsigned long long) {
  State& s = state();
  if (fails("cuMemCreate")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(s.mu);
  *handle = s.next_handle++;
  s.handles[*handle] = prop->location.id;
  s.log.push_back("cuMemCreate " + n(*handle) + " " + n(bytes) + " dev=" + std::to_string(prop->location.id));
  return CUDA_SUCCESS;
}
CUresult mem_release(CUmemGenericAllocationHandle handle) {
  return fails("cuMemRelease", n(handle)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult address_reserve(CUdeviceptr* ptr, std::size_t bytes, std::size_t, CUdeviceptr, unsigned long long) {
  State& s = state();
  if (fails("cuMemAddressReserve")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(s.mu);
  *ptr = s.next_address;
  s.next_address += bytes + (std::size_t{2} << 20);
  s.log.push_back("cuMemAddressReserve " + n(*ptr) + " " + n(bytes));
  return CUDA_SUCCESS;
}
CUresult address_free(CUdeviceptr ptr, std::size_t) {
  return fails("cuMemAddressFree", n(ptr)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult mem_map(CUdeviceptr ptr, std::size_t, std::size_t, CUmemGenericAllocationHandle handle, unsigned long long) {
  return fails("cuMemMap", n(ptr) + " " + n(handle)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult mem_unmap(CUdeviceptr ptr, std::size_t) {
  return fails("cuMemUnmap", n(ptr)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult set_access(CUdeviceptr ptr, std::size_t bytes, const CUmemAccessDesc* desc, std::size_t count) {
  std::string line = n(ptr) + " " + n(bytes);
  for (std::size_t i = 0; i < count; ++i)
    line += " dev=" + std::to_string(desc[i].location.id) + " flags=" + std::to_string(desc[i].flags);
  return fails("cuMemSetAccess", line) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult export_handle(void* shareable, CUmemGenericAllocationHandle handle, CUmemAllocationHandleType,
                       unsigned long long) {
  if (fails("cuMemExportToShareableHandle")) return CUDA_ERROR_INVALID_VALUE;
  const int fd = ::memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return CUDA_ERROR_OPERATING_SYSTEM;
  State& s = state();
  const std::lock_guard lock(s.mu);
  s.exported[st.st_ino] = s.handles[handle];
  *static_cast<int*>(shareable) = fd;
  return CUDA_SUCCESS;
}
CUresult import_handle(CUmemGenericAllocationHandle* handle, void* os_handle, CUmemAllocationHandleType) {
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  if (fails("cuMemImportFromShareableHandle")) return CUDA_ERROR_INVALID_VALUE;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return CUDA_ERROR_INVALID_HANDLE;
  State& s = state();
  const std::lock_guard lock(s.mu);
  const auto home = s.exported.find(st.st_ino);
  *handle = s.next_handle++;
  s.handles[*handle] = home != s.exported.end() ? home->second : 0;
  s.log.push_back("cuMemImportFromShareableHandle " + n(*handle) + " fd=" + std::to_string(fd));
  return CUDA_SUCCESS;
}
CUresult allocation_properties(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  if (fails("cuMemGetAllocationPropertiesFromHandle")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(state().mu);
  *prop = CUmemAllocationProp{};
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = state().handles[handle];
  return CUDA_SUCCESS;
}

CUresult host_register(void* pages, std::size_t bytes, unsigned) {
  State& s = state();
  if (fails("cuMemHostRegister")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(s.mu);
  if (s.registered.count(pages) != 0) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  s.registered[pages] = bytes;
  s.log.push_back("cuMemHostRegister " + n(pages) + " " + n(bytes));
  return CUDA_SUCCESS;
}
CUresult host_unregister(void* pages) {
  State& s = state();
  if (fails("cuMemHostUnregister")) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(s.mu);
  if (s.registered.erase(pages) == 0) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  s.log.push_back("cuMemHostUnregister " + n(pages));
  return CUDA_SUCCESS;
}
CUresult host_device_pointer(CUdeviceptr* device, void* pages, unsigned) {
  State& s = state();
  if (fails("cuMemHostGetDevicePointer")) return CUDA_ERROR_INVALID_VALUE;
  if (t_current < 0) return CUDA_ERROR_INVALID_CONTEXT;
  const std::lock_guard lock(s.mu);
  const auto* p = static_cast<const std::byte*>(pages);
  for (const auto& [start, bytes] : s.registered) {
    const auto* b = static_cast<const std::byte*>(start);
    if (p >= b && p < b + bytes) {
      *device = reinterpret_cast<CUdeviceptr>(pages) + (static_cast<CUdeviceptr>(t_current) << 44);
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

struct Entry {
  const char* name;
  void* function;
};
#define ACCORD_FAKE(name, fn) Entry{name, reinterpret_cast<void*>(&fn)}
const Entry kEntries[] = {
    ACCORD_FAKE("cuDeviceGet", device_get),
    ACCORD_FAKE("cuDevicePrimaryCtxRetain", primary_retain),
    ACCORD_FAKE("cuDevicePrimaryCtxRelease", primary_release),
    ACCORD_FAKE("cuCtxSetCurrent", ctx_set_current),
    ACCORD_FAKE("cuDeviceGetName", device_name),
    ACCORD_FAKE("cuDeviceGetAttribute", device_attribute),
    ACCORD_FAKE("cuDeviceTotalMem", device_total_mem),
    ACCORD_FAKE("cuDeviceGetUuid", device_uuid),
    ACCORD_FAKE("cuDeviceCanAccessPeer", can_access_peer),
    ACCORD_FAKE("cuCtxGetStreamPriorityRange", priority_range),
    ACCORD_FAKE("cuMemGetAllocationGranularity", granularity),
    ACCORD_FAKE("cuMemGetInfo", mem_get_info),
    ACCORD_FAKE("cuStreamCreate", stream_create),
    ACCORD_FAKE("cuStreamCreateWithPriority", stream_create_with_priority),
    ACCORD_FAKE("cuStreamDestroy", stream_destroy),
    ACCORD_FAKE("cuStreamSynchronize", success),
    ACCORD_FAKE("cuMemsetD8Async", success),
    ACCORD_FAKE("cuMemCreate", mem_create),
    ACCORD_FAKE("cuMemRelease", mem_release),
    ACCORD_FAKE("cuMemAddressReserve", address_reserve),
    ACCORD_FAKE("cuMemAddressFree", address_free),
    ACCORD_FAKE("cuMemMap", mem_map),
    ACCORD_FAKE("cuMemUnmap", mem_unmap),
    ACCORD_FAKE("cuMemSetAccess", set_access),
    ACCORD_FAKE("cuMemExportToShareableHandle", export_handle),
    ACCORD_FAKE("cuMemImportFromShareableHandle", import_handle),
    ACCORD_FAKE("cuMemGetAllocationPropertiesFromHandle", allocation_properties),
    ACCORD_FAKE("cuMemHostRegister", host_register),
    ACCORD_FAKE("cuMemHostUnregister", host_unregister),
    ACCORD_FAKE("cuMemHostGetDevicePointer", host_device_pointer),
};
#undef ACCORD_FAKE

}  // namespace

void set_gpu_count(int count) {
  const std::lock_guard lock(state().mu);
  state().gpus = count < kMaxGpus ? count : kMaxGpus;
}

void* gpu_symbol(const char* symbol) {
  for (const Entry& e : kEntries)
    if (std::strcmp(e.name, symbol) == 0) return e.function;
  return nullptr;
}

}  // namespace accord_fake_cuda

// --- for the tests (cuda_fake_gpus.h finds these with dlsym) ---

// "peer=0" / "peer=1": what cuDeviceCanAccessPeer answers (1 at first); "fail=<entry
// point>": that call fails with CUDA_ERROR_INVALID_VALUE ("fail=" for none); "clear":
// empties the log.
extern "C" __attribute__((visibility("default"))) void accord_fake_cuda_control(const char* setting) {
  using accord_fake_cuda::state;
  const std::string s = setting;
  const std::lock_guard lock(state().mu);
  if (s == "peer=0" || s == "peer=1")
    state().peer = s == "peer=1";
  else if (s.rfind("fail=", 0) == 0)
    state().fail = s.substr(5);
  else if (s == "clear")
    state().log.clear();
}

// The memory calls made since the last "clear", one per line ("cuMemSetAccess <ptr>
// <bytes> dev=1 flags=3"). The pointer is valid until the calling thread's next call.
extern "C" __attribute__((visibility("default"))) const char* accord_fake_cuda_log() {
  using accord_fake_cuda::state;
  thread_local std::string text;
  const std::lock_guard lock(state().mu);
  text.clear();
  for (const std::string& line : state().log) text += line + "\n";
  return text.c_str();
}
