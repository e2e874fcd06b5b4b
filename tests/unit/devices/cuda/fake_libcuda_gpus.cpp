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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <string>
#include <vector>

namespace accord_fake_cuda {
namespace {

constexpr int kMaxGpus = 8;
int g_contexts[kMaxGpus];
// Contexts made by cuCtxCreate: slot ordinal * kCreatedPerGpu + i, handed out in turn.
constexpr int kCreatedPerGpu = 64;
int g_created[kMaxGpus * kCreatedPerGpu];
thread_local int t_current = -1;  // ordinal of the current context, -1 for none
thread_local CUcontext t_context = nullptr;  // the current context itself

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
  // The graph engine below, off unless a test turns it on ("graphs=1"): off, its entry
  // points answer CUDA_ERROR_NOT_SUPPORTED, as every unknown one does.
  bool graphs = false;
  std::string ignore;  // an entry point that answers success and does nothing ("ignore=<name>")
  std::set<int*> events;  // made by cuEventCreate (others are test-owned ints)
  bool mps = false;        // CU_DEVICE_ATTRIBUTE_MPS_ENABLED ("mps=1")
  int created[kMaxGpus] = {};  // contexts made per GPU, ever
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
// The ordinal of a context the fake handed out, or -1.
int ordinal_of(CUcontext context) {
  const auto* p = reinterpret_cast<const int*>(context);
  if (p >= g_contexts && p < g_contexts + kMaxGpus) return static_cast<int>(p - g_contexts);
  if (p >= g_created && p < g_created + kMaxGpus * kCreatedPerGpu) return static_cast<int>(p - g_created) / kCreatedPerGpu;
  return -1;
}
CUresult ctx_set_current(CUcontext context) {
  t_current = ordinal_of(context);
  t_context = context;
  return CUDA_SUCCESS;
}
CUresult ctx_create(CUcontext* context, CUctxCreateParams*, unsigned, CUdevice device) {
  if (device < 0 || device >= kMaxGpus) return CUDA_ERROR_INVALID_DEVICE;
  if (fails("cuCtxCreate", "dev=" + n(static_cast<std::uint64_t>(device)))) return CUDA_ERROR_MPS_MAX_CLIENTS_REACHED;
  const std::lock_guard lock(state().mu);
  const int i = state().created[device]++ % kCreatedPerGpu;
  *context = reinterpret_cast<CUcontext>(&g_created[device * kCreatedPerGpu + i]);
  t_current = device;
  t_context = *context;
  return CUDA_SUCCESS;
}
CUresult ctx_destroy(CUcontext context) {
  fails("cuCtxDestroy", "dev=" + std::to_string(ordinal_of(context)));
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
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: {
      const std::lock_guard lock(state().mu);
      *value = state().mps ? 1 : 0;
      break;
    }
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

// --- the graph engine: just enough for CudaFlagPool::probe (cuda_flags.cpp) and regions
// of no operation ---------------------------------------------------------------------
// A graph is a list of nodes run in order at launch: the built-in flag kernel and the
// memory operation write a 32-bit value through a fake device pointer (registered host
// memory: host + ordinal * 2^44), an event record sets the event's int to success, an
// empty node does nothing. Only the module holding the flag kernel loads. Each launch
// is logged with its stream; "ignore=cuGraphLaunch" makes launches that never end.
bool graphs_on(const char* call) {
  State& s = state();
  const std::lock_guard lock(s.mu);
  return s.graphs && s.fail != call;
}
bool ignored(const char* call) {
  const std::lock_guard lock(state().mu);
  return state().ignore == call;
}
int g_flag_function;        // the flag kernel's CUfunction is this address
int g_early_flag_function;  // and the early flag kernel's this one
struct FakeNode {
  enum Kind { Write, Event, Nothing } kind = Write;
  bool kernel = false;  // a Write by a flag kernel (cuGraphNodeGetType)
  CUdeviceptr address = 0;
  unsigned value = 0;
  CUevent event = nullptr;
};
struct FakeGraph {
  std::vector<std::unique_ptr<FakeNode>> nodes;  // a CUgraphNode is a node's address
};
struct FakeExec {
  std::vector<FakeNode> nodes;        // copies, in the graph's order
  std::vector<CUgraphNode> handles;   // the graph's handle of each, to find one named by it
};

CUresult event_create(CUevent* event, unsigned) {
  if (!graphs_on("cuEventCreate")) return CUDA_ERROR_NOT_SUPPORTED;
  int* e = new int(CUDA_ERROR_NOT_READY);
  const std::lock_guard lock(state().mu);
  state().events.insert(e);
  state().log.push_back("event-context " + n(t_context));  // in which context it was made
  *event = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}
CUresult event_destroy(CUevent event) {
  int* e = reinterpret_cast<int*>(event);
  const std::lock_guard lock(state().mu);
  if (state().events.erase(e) != 0) delete e;  // test-owned ints are the tests'
  return CUDA_SUCCESS;
}
CUresult module_load(CUmodule* module, const void* image, unsigned, CUjit_option*, void**) {
  if (!graphs_on("cuModuleLoadDataEx")) return CUDA_ERROR_NOT_SUPPORTED;
  if (std::strstr(static_cast<const char*>(image), ".entry accord_completion_flag") == nullptr)
    return CUDA_ERROR_NOT_SUPPORTED;
  // "fail=sm_90": a GPU before Hopper, which refuses the early flag kernel's module.
  const bool early = std::strstr(static_cast<const char*>(image), ".entry accord_completion_flag_early") != nullptr;
  if (early && !graphs_on("sm_90")) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  fails("cuModuleLoadDataEx", early ? "accord_completion_flag_early" : "accord_completion_flag");
  *module = reinterpret_cast<CUmodule>(new int(0));
  return CUDA_SUCCESS;
}
CUresult module_unload(CUmodule module) {
  delete reinterpret_cast<int*>(module);
  return CUDA_SUCCESS;
}
CUresult module_function(CUfunction* function, CUmodule, const char* name) {
  if (!graphs_on("cuModuleGetFunction")) return CUDA_ERROR_NOT_FOUND;
  if (std::strcmp(name, "accord_completion_flag") == 0) {
    *function = reinterpret_cast<CUfunction>(&g_flag_function);
  } else if (std::strcmp(name, "accord_completion_flag_early") == 0) {
    *function = reinterpret_cast<CUfunction>(&g_early_flag_function);
  } else {
    return CUDA_ERROR_NOT_FOUND;
  }
  return CUDA_SUCCESS;
}
CUresult graph_create(CUgraph* graph, unsigned) {
  if (!graphs_on("cuGraphCreate")) return CUDA_ERROR_NOT_SUPPORTED;
  *graph = reinterpret_cast<CUgraph>(new FakeGraph());
  return CUDA_SUCCESS;
}
CUresult graph_destroy(CUgraph graph) {
  delete reinterpret_cast<FakeGraph*>(graph);
  return CUDA_SUCCESS;
}
CUresult add_node(CUgraphNode* added, CUgraph graph, FakeNode node) {
  auto& nodes = reinterpret_cast<FakeGraph*>(graph)->nodes;
  nodes.push_back(std::make_unique<FakeNode>(node));
  *added = reinterpret_cast<CUgraphNode>(nodes.back().get());
  return CUDA_SUCCESS;
}
FakeNode flag_kernel_node(const CUDA_KERNEL_NODE_PARAMS* params) {
  FakeNode node;
  node.kernel = true;
  node.address = *static_cast<const CUdeviceptr*>(params->kernelParams[0]);
  node.value = *static_cast<const unsigned*>(params->kernelParams[1]);
  return node;
}
FakeNode write_node(const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  FakeNode node;
  node.address = params->paramArray[0].writeValue.address;
  node.value = params->paramArray[0].writeValue.value;
  return node;
}
CUresult add_kernel_node(CUgraphNode* added, CUgraph graph, const CUgraphNode*, std::size_t,
                         const CUDA_KERNEL_NODE_PARAMS* params) {
  if (!graphs_on("cuGraphAddKernelNode")) return CUDA_ERROR_NOT_SUPPORTED;
  if (params->func != reinterpret_cast<CUfunction>(&g_flag_function) &&
      params->func != reinterpret_cast<CUfunction>(&g_early_flag_function))
    return CUDA_ERROR_INVALID_VALUE;
  return add_node(added, graph, flag_kernel_node(params));
}
CUresult node_type(CUgraphNode node, CUgraphNodeType* type) {
  if (!graphs_on("cuGraphNodeGetType")) return CUDA_ERROR_NOT_SUPPORTED;
  const FakeNode& n = *reinterpret_cast<const FakeNode*>(node);
  *type = n.kernel                          ? CU_GRAPH_NODE_TYPE_KERNEL
          : n.kind == FakeNode::Event       ? CU_GRAPH_NODE_TYPE_EVENT_RECORD
          : n.kind == FakeNode::Nothing     ? CU_GRAPH_NODE_TYPE_EMPTY
                                            : CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
  return CUDA_SUCCESS;
}
// Nodes run in the order they were added, so an edge changes nothing here; a programmatic
// one is checked as the driver checks it (kernel to kernel) and logged.
CUresult add_dependencies(CUgraph, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData* edges,
                          std::size_t count) {
  if (!graphs_on("cuGraphAddDependencies")) return CUDA_ERROR_NOT_SUPPORTED;
  for (std::size_t i = 0; i < count; ++i) {
    if (edges == nullptr || edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC) continue;
    if (!reinterpret_cast<const FakeNode*>(from[i])->kernel || !reinterpret_cast<const FakeNode*>(to[i])->kernel)
      return CUDA_ERROR_INVALID_VALUE;
    const std::lock_guard lock(state().mu);
    state().log.push_back("cuGraphAddDependencies programmatic port=" + std::to_string(edges[i].from_port));
  }
  return CUDA_SUCCESS;
}
CUresult add_write_node(CUgraphNode* added, CUgraph graph, const CUgraphNode*, std::size_t,
                        const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  if (!graphs_on("cuGraphAddBatchMemOpNode")) return CUDA_ERROR_NOT_SUPPORTED;
  return add_node(added, graph, write_node(params));
}
FakeNode event_node(CUevent event) {
  FakeNode node;
  node.kind = FakeNode::Event;
  node.event = event;
  return node;
}
CUresult add_event_node(CUgraphNode* added, CUgraph graph, const CUgraphNode*, std::size_t, CUevent event) {
  if (!graphs_on("cuGraphAddEventRecordNode")) return CUDA_ERROR_NOT_SUPPORTED;
  return add_node(added, graph, event_node(event));
}
CUresult add_empty_node(CUgraphNode* added, CUgraph graph, const CUgraphNode*, std::size_t) {
  if (!graphs_on("cuGraphAddEmptyNode")) return CUDA_ERROR_NOT_SUPPORTED;
  FakeNode node;
  node.kind = FakeNode::Nothing;
  return add_node(added, graph, node);
}
CUresult instantiate(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  if (!graphs_on("cuGraphInstantiateWithFlags")) return CUDA_ERROR_NOT_SUPPORTED;
  const auto* g = reinterpret_cast<const FakeGraph*>(graph);
  auto* e = new FakeExec();
  for (const auto& node : g->nodes) {
    e->nodes.push_back(*node);
    e->handles.push_back(reinterpret_cast<CUgraphNode>(node.get()));
  }
  *exec = reinterpret_cast<CUgraphExec>(e);
  return CUDA_SUCCESS;
}
CUresult exec_destroy(CUgraphExec exec) {
  delete reinterpret_cast<FakeExec*>(exec);
  return CUDA_SUCCESS;
}
// A graph exec's Set*Params entry point `call`: the exec's copy of the node the graph's
// handle `node` names becomes `replacement`.
CUresult set_node(const char* call, CUgraphExec exec, CUgraphNode node, const FakeNode& replacement) {
  if (!graphs_on(call)) return CUDA_ERROR_NOT_SUPPORTED;
  if (ignored(call)) return CUDA_SUCCESS;
  auto* e = reinterpret_cast<FakeExec*>(exec);
  const auto at = std::find(e->handles.begin(), e->handles.end(), node);
  if (at == e->handles.end()) return CUDA_ERROR_INVALID_VALUE;
  e->nodes[static_cast<std::size_t>(at - e->handles.begin())] = replacement;
  return CUDA_SUCCESS;
}
CUresult set_kernel_params(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* params) {
  return set_node("cuGraphExecKernelNodeSetParams", exec, node, flag_kernel_node(params));
}
CUresult set_write_params(CUgraphExec exec, CUgraphNode node, const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  return set_node("cuGraphExecBatchMemOpNodeSetParams", exec, node, write_node(params));
}
CUresult set_event(CUgraphExec exec, CUgraphNode node, CUevent event) {
  return set_node("cuGraphExecEventRecordNodeSetEvent", exec, node, event_node(event));
}
CUresult graph_launch(CUgraphExec exec, CUstream stream) {
  if (!graphs_on("cuGraphLaunch")) return CUDA_ERROR_NOT_SUPPORTED;
  if (t_current < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (ignored("cuGraphLaunch")) return CUDA_SUCCESS;  // a launch that never ends: its flag stays 0
  {
    const std::lock_guard lock(state().mu);
    state().log.push_back("cuGraphLaunch stream=" + n(stream));  // which stream took it (stream affinity)
    state().log.push_back("launch-context " + n(t_context));     // and in which context
  }
  for (const FakeNode& node : reinterpret_cast<FakeExec*>(exec)->nodes) {
    if (node.kind == FakeNode::Nothing) continue;
    if (node.kind == FakeNode::Event) {
      __atomic_store_n(reinterpret_cast<int*>(node.event), static_cast<int>(CUDA_SUCCESS), __ATOMIC_RELEASE);
      continue;
    }
    auto* word = reinterpret_cast<std::atomic<std::uint32_t>*>(node.address - (static_cast<CUdeviceptr>(t_current) << 44));
    word->store(node.value, std::memory_order_release);
  }
  return CUDA_SUCCESS;
}
CUresult stream_wait_value(CUstream, CUdeviceptr, cuuint32_t, unsigned) {
  return graphs_on("cuStreamWaitValue32") ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
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
    ACCORD_FAKE("cuCtxCreate", ctx_create),
    ACCORD_FAKE("cuCtxDestroy", ctx_destroy),
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
    ACCORD_FAKE("cuEventCreate", event_create),
    ACCORD_FAKE("cuEventDestroy", event_destroy),
    ACCORD_FAKE("cuModuleLoadDataEx", module_load),
    ACCORD_FAKE("cuModuleUnload", module_unload),
    ACCORD_FAKE("cuModuleGetFunction", module_function),
    ACCORD_FAKE("cuGraphCreate", graph_create),
    ACCORD_FAKE("cuGraphDestroy", graph_destroy),
    ACCORD_FAKE("cuGraphAddKernelNode", add_kernel_node),
    ACCORD_FAKE("cuGraphAddBatchMemOpNode", add_write_node),
    ACCORD_FAKE("cuGraphAddEventRecordNode", add_event_node),
    ACCORD_FAKE("cuGraphAddEmptyNode", add_empty_node),
    ACCORD_FAKE("cuGraphNodeGetType", node_type),
    ACCORD_FAKE("cuGraphAddDependencies", add_dependencies),
    ACCORD_FAKE("cuGraphInstantiateWithFlags", instantiate),
    ACCORD_FAKE("cuGraphExecDestroy", exec_destroy),
    ACCORD_FAKE("cuGraphExecKernelNodeSetParams", set_kernel_params),
    ACCORD_FAKE("cuGraphExecBatchMemOpNodeSetParams", set_write_params),
    ACCORD_FAKE("cuGraphExecEventRecordNodeSetEvent", set_event),
    ACCORD_FAKE("cuGraphLaunch", graph_launch),
    ACCORD_FAKE("cuStreamWaitValue32", stream_wait_value),
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
// point>": that call fails with CUDA_ERROR_INVALID_VALUE ("fail=" for none; the graph
// engine's fail with CUDA_ERROR_NOT_SUPPORTED); "graphs=1" / "graphs=0": the graph
// engine on or off (off at first); "ignore=<entry point>": a graph exec's Set*Params
// call answers success and changes nothing ("ignore=" for none); "clear": empties the log.
extern "C" __attribute__((visibility("default"))) void accord_fake_cuda_control(const char* setting) {
  using accord_fake_cuda::state;
  const std::string s = setting;
  const std::lock_guard lock(state().mu);
  if (s == "peer=0" || s == "peer=1")
    state().peer = s == "peer=1";
  else if (s.rfind("fail=", 0) == 0)
    state().fail = s.substr(5);
  else if (s == "mps=0" || s == "mps=1")
    state().mps = s == "mps=1";
  else if (s == "graphs=0" || s == "graphs=1")
    state().graphs = s == "graphs=1";
  else if (s.rfind("ignore=", 0) == 0)
    state().ignore = s.substr(7);
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
