// The emulator's driver, device, context and memory entry points. One driver with one
// device of type VPU; memory is plain host memory (the "NPU" is the CPU), tracked so that
// zeMemGetAllocProperties and zeMemFree can tell our allocations from anything else.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "daemon/devices/npu_emulator/npu_emulator_impl.h"

namespace accord::npu_emulator {
namespace {

constexpr char kDeviceName[] = "Accord NPU emulator";
constexpr std::uint32_t kDriverVersion = (1u << 24) | (0u << 16) | 1u;  // 1.0.1
constexpr std::size_t kMaxAllocation = std::size_t{1} << 34;           // 16 GiB

struct Allocation {
  std::size_t bytes = 0;
  ze_memory_type_t type = ZE_MEMORY_TYPE_UNKNOWN;
  std::uint64_t id = 0;
};

struct MemoryTable {
  std::mutex mutex;
  std::map<std::uintptr_t, Allocation> allocations;  // by base address
  std::uint64_t next_id = 1;
};

MemoryTable& memory() noexcept {
  static MemoryTable table;
  return table;
}

// The allocation holding `pointer`, or end().
std::map<std::uintptr_t, Allocation>::iterator find_allocation(MemoryTable& table, const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto it = table.allocations.upper_bound(address);
  if (it == table.allocations.begin()) return table.allocations.end();
  --it;
  return address - it->first < it->second.bytes ? it : table.allocations.end();
}

void fill_uuid(std::uint8_t* uuid, std::size_t size, std::uint8_t salt) {
  const std::uint64_t secret = library_secret();
  for (std::size_t i = 0; i < size; ++i) uuid[i] = static_cast<std::uint8_t>((secret >> ((i % 8) * 8)) ^ salt ^ i);
}

ze_result_t allocate(ze_context_handle_t context, std::size_t size, std::size_t alignment, ze_memory_type_t type,
                     void** pointer) {
  if (object_of<Context>(context) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (size > kMaxAllocation) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  alignment = std::max<std::size_t>(alignment, 64);
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::memset(p, 0, rounded);
  MemoryTable& table = memory();
  std::lock_guard lock(table.mutex);
  table.allocations[reinterpret_cast<std::uintptr_t>(p)] = {size, type, table.next_id++};
  *pointer = p;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

std::uint64_t library_secret() noexcept {
  // Distinct per loaded copy of the library (its own static), and never a small number.
  static const char anchor = 0;
  return reinterpret_cast<std::uint64_t>(&anchor) ^ 0x5a3c'96e1'0f87'4b2dULL;
}

Driver& the_driver() noexcept {
  static Driver driver;
  return driver;
}

Device& the_device() noexcept {
  static Device device;
  return device;
}

ze_result_t ZE_APICALL init(ze_init_flags_t flags) {
  // An NPU driver has nothing to offer a caller that wants GPUs only.
  if ((flags & ZE_INIT_FLAG_GPU_ONLY) != 0 && (flags & ZE_INIT_FLAG_VPU_ONLY) == 0)
    return ZE_RESULT_ERROR_UNINITIALIZED;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get(uint32_t* count, ze_driver_handle_t* drivers) {
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || drivers == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  drivers[0] = reinterpret_cast<ze_driver_handle_t>(&the_driver());
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (version == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *version = ZE_API_VERSION_1_4;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  fill_uuid(properties->uuid.id, ZE_MAX_DRIVER_UUID_SIZE, 0xd1);
  properties->driverVersion = kDriverVersion;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get_ipc_properties(ze_driver_handle_t driver, ze_driver_ipc_properties_t* properties) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->flags = 0;  // no IPC handles, as on Intel's NPU
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get_extension_properties(ze_driver_handle_t driver, uint32_t* count,
                                                       ze_driver_extension_properties_t* properties) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  std::memset(properties[0].name, 0, sizeof(properties[0].name));
  std::memcpy(properties[0].name, ZE_GRAPH_EXT_NAME, sizeof(ZE_GRAPH_EXT_NAME));
  properties[0].version = ZE_GRAPH_EXT_VERSION_1_4;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driver_get_extension_function_address(ze_driver_handle_t driver, const char* name,
                                                             void** address) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (name == nullptr || address == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Every version up to 1.4 gets the same table: a 1.x table is a prefix of 1.4's.
  static constexpr std::string_view kNames[] = {ZE_GRAPH_EXT_NAME,          "ZE_extension_graph_1_0",
                                                "ZE_extension_graph_1_1", "ZE_extension_graph_1_2",
                                                "ZE_extension_graph_1_3", ZE_GRAPH_EXT_NAME_1_4};
  if (std::find(std::begin(kNames), std::end(kNames), std::string_view(name)) == std::end(kNames))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *address = const_cast<ze_graph_dditable_ext_t*>(&graph_table());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || devices == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  devices[0] = reinterpret_cast<ze_device_handle_t>(&the_device());
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_sub_devices(ze_device_handle_t device, uint32_t* count, ze_device_handle_t*) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *count = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->type = ZE_DEVICE_TYPE_VPU;
  properties->vendorId = 0;  // not a PCI device; claims no vendor's id
  properties->deviceId = 0xacc0;
  properties->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
  properties->subdeviceId = 0;
  properties->coreClockRate = 1000;
  properties->maxMemAllocSize = kMaxAllocation;
  properties->maxHardwareContexts = 64;
  properties->maxCommandQueuePriority = 0;
  properties->numThreadsPerEU = 1;
  properties->physicalEUSimdWidth = 1;
  properties->numEUsPerSubslice = 1;
  properties->numSubslicesPerSlice = 1;
  properties->numSlices = 1;
  properties->timerResolution = 1;
  properties->timestampValidBits = 64;
  properties->kernelTimestampValidBits = 64;
  fill_uuid(properties->uuid.id, ZE_MAX_DEVICE_UUID_SIZE, 0xde);
  std::memset(properties->name, 0, sizeof(properties->name));
  std::memcpy(properties->name, kDeviceName, sizeof(kDeviceName));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_compute_properties(ze_device_handle_t device,
                                                     ze_device_compute_properties_t* properties) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->maxTotalGroupSize = 1;
  properties->maxGroupSizeX = properties->maxGroupSizeY = properties->maxGroupSizeZ = 1;
  properties->maxGroupCountX = properties->maxGroupCountY = properties->maxGroupCountZ = 1;
  properties->maxSharedLocalMemory = 0;
  properties->numSubGroupSizes = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_queue_group_properties(ze_device_handle_t device, uint32_t* count,
                                                         ze_command_queue_group_properties_t* properties) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  properties[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
  properties[0].maxMemoryFillPatternSize = 16;
  properties[0].numQueues = 64;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_memory_properties(ze_device_handle_t device, uint32_t* count,
                                                    ze_device_memory_properties_t* properties) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  properties[0].flags = 0;
  properties[0].maxClockRate = 0;
  properties[0].maxBusWidth = 0;
  properties[0].totalSize = 0;  // shares host memory, has none of its own
  std::memset(properties[0].name, 0, sizeof(properties[0].name));
  std::memcpy(properties[0].name, "host", 5);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL device_get_status(ze_device_handle_t device) {
  return object_of<Device>(device) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc,
                                      ze_context_handle_t* context) {
  if (object_of<Driver>(driver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *context = reinterpret_cast<ze_context_handle_t>(new Context());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL context_destroy(ze_context_handle_t context) {
  Context* c = object_of<Context>(context);
  if (c == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete c;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL context_get_status(ze_context_handle_t context) {
  return object_of<Context>(context) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL mem_alloc_shared(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* device_desc,
                                        const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                                        ze_device_handle_t device, void** pointer) {
  if (device_desc == nullptr || host_desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (device != nullptr && object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(context, size, alignment, ZE_MEMORY_TYPE_SHARED, pointer);
}

ze_result_t ZE_APICALL mem_alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc,
                                        size_t size, size_t alignment, ze_device_handle_t device, void** pointer) {
  if (desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return allocate(context, size, alignment, ZE_MEMORY_TYPE_DEVICE, pointer);
}

ze_result_t ZE_APICALL mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc, size_t size,
                                      size_t alignment, void** pointer) {
  if (desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return allocate(context, size, alignment, ZE_MEMORY_TYPE_HOST, pointer);
}

ze_result_t ZE_APICALL mem_free(ze_context_handle_t context, void* pointer) {
  if (object_of<Context>(context) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  MemoryTable& table = memory();
  {
    std::lock_guard lock(table.mutex);
    auto it = table.allocations.find(reinterpret_cast<std::uintptr_t>(pointer));
    if (it == table.allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    table.allocations.erase(it);
  }
  std::free(pointer);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL mem_get_alloc_properties(ze_context_handle_t context, const void* pointer,
                                                ze_memory_allocation_properties_t* properties,
                                                ze_device_handle_t* device) {
  if (object_of<Context>(context) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr || properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  MemoryTable& table = memory();
  std::lock_guard lock(table.mutex);
  auto it = find_allocation(table, pointer);
  properties->type = it == table.allocations.end() ? ZE_MEMORY_TYPE_UNKNOWN : it->second.type;
  properties->id = it == table.allocations.end() ? 0 : it->second.id;
  properties->pageSize = it == table.allocations.end() ? 0 : 4096;
  if (device != nullptr)
    *device = it == table.allocations.end() || it->second.type == ZE_MEMORY_TYPE_HOST
                  ? nullptr
                  : reinterpret_cast<ze_device_handle_t>(&the_device());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL mem_get_address_range(ze_context_handle_t context, const void* pointer, void** base,
                                             size_t* size) {
  if (object_of<Context>(context) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pointer == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  MemoryTable& table = memory();
  std::lock_guard lock(table.mutex);
  auto it = find_allocation(table, pointer);
  if (it == table.allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (base != nullptr) *base = reinterpret_cast<void*>(it->first);
  if (size != nullptr) *size = it->second.bytes;
  return ZE_RESULT_SUCCESS;
}

}  // namespace accord::npu_emulator
