// Table 5 of gpu_graph_bench: see gpu_bench_contexts.h.
#include "tests/bench/gpu_bench_contexts.h"

#include <cstdio>
#include <string>
#include <vector>

namespace accord::bench::gpu {
namespace {

// The first failing call of a sequence, kept so that one line can say what failed.
struct Trial {
  const cu::CudaSymbols& cuda;
  std::string failure;
  bool ok(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS || !failure.empty()) return failure.empty();
    const char* name = nullptr;
    cuda.cuGetErrorName(r, &name);
    failure = std::string(what) + ": " + (name != nullptr ? name : "?");
    return false;
  }
};

// A context of this process with the bench kernels loaded: its step kernel computes
// out[0] = in[0] + 1.
struct Context {
  const cu::CudaSymbols& cuda;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction step = nullptr;
  CUstream stream = nullptr;
  Context(Trial& t, CUdevice device) : cuda(t.cuda) {
    if (!t.ok(t.cuda.cuCtxCreate(&context, nullptr, 0, device), "cuCtxCreate")) return;
    std::vector<std::byte> image = ptx();
    image.push_back(std::byte{0});
    t.ok(t.cuda.cuModuleLoadDataEx(&module, image.data(), 0, nullptr, nullptr), "cuModuleLoadDataEx") &&
        t.ok(t.cuda.cuModuleGetFunction(&step, module, "accord_bench_step"), "cuModuleGetFunction") &&
        t.ok(t.cuda.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  // Runs one step kernel in this context and waits for it.
  bool run_step(Trial& t, CUdeviceptr out, CUdeviceptr in) const {
    if (!t.ok(t.cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")) return false;
    unsigned long long spin = 0;
    void* args[] = {&out, &in, &spin};
    CUDA_KERNEL_NODE_PARAMS node{};
    node.func = step;
    node.gridDimX = node.gridDimY = node.gridDimZ = 1;
    node.blockDimX = node.blockDimY = node.blockDimZ = 1;
    node.kernelParams = args;
    CUgraph graph = nullptr;
    CUgraphNode added = nullptr;
    CUgraphExec exec = nullptr;
    const bool done = t.ok(t.cuda.cuGraphCreate(&graph, 0), "cuGraphCreate") &&
                      t.ok(t.cuda.cuGraphAddKernelNode(&added, graph, nullptr, 0, &node), "cuGraphAddKernelNode") &&
                      t.ok(t.cuda.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags") &&
                      t.ok(t.cuda.cuGraphLaunch(exec, stream), "cuGraphLaunch") &&
                      t.ok(t.cuda.cuStreamSynchronize(stream), "cuStreamSynchronize (the kernel)");
    if (exec != nullptr) t.cuda.cuGraphExecDestroy(exec);
    if (graph != nullptr) t.cuda.cuGraphDestroy(graph);
    return done;
  }
  ~Context() {
    if (context == nullptr) return;
    // Teardown errors are not the question here.
    static_cast<void>(cuda.cuCtxSetCurrent(context));
    if (stream != nullptr) cuda.cuStreamDestroy(stream);
    if (module != nullptr) cuda.cuModuleUnload(module);
    cuda.cuCtxDestroy(context);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

// Memory `owner` made, written by a kernel of `other` (in[0] is 0, so it stores 1), then
// read by a kernel of `owner` into pinned host memory (which then holds 2).
void try_sharing(const char* how, Trial& t, const Context& owner, const Context& other, CUdeviceptr memory,
                 float* host, CUdeviceptr host_on_device) {
  *host = -1;
  const bool done = other.run_step(t, memory, memory + 256) && owner.run_step(t, host_on_device, memory);
  if (done)
    std::printf("  %-58s %s (read %.1f, expected 2.0)\n", how, *host == 2.0f ? "shared" : "WRONG VALUE", *host);
  else
    std::printf("  %-58s failed: %s\n", how, t.failure.c_str());
}

}  // namespace

void context_sharing(const cu::CudaSymbols& cuda) {
  std::printf("\n5. memory of one context used by another context of the same process\n");
  if (cuda.cuCtxCreate == nullptr || cuda.cuCtxDestroy == nullptr) {
    std::printf("  (this driver has no cuCtxCreate)\n");
    return;
  }
  Trial t{cuda, {}};
  CUdevice device = 0;
  int mps = -1;
  t.ok(cuda.cuDeviceGet(&device, 0), "cuDeviceGet");
  t.ok(cuda.cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, device), "cuDeviceGetAttribute");
  std::printf("  MPS enabled (CU_DEVICE_ATTRIBUTE_MPS_ENABLED): %d\n", mps);
  const Context owner(t, device);
  const Context other(t, device);
  if (!t.failure.empty()) {
    std::printf("  two contexts: %s\n", t.failure.c_str());
    return;
  }
  void* host_page = nullptr;
  CUdeviceptr host_on_device = 0;
  t.ok(cuda.cuCtxSetCurrent(owner.context), "cuCtxSetCurrent");
  t.ok(cuda.cuMemHostAlloc(&host_page, 256, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
  t.ok(cuda.cuMemHostGetDevicePointer(&host_on_device, host_page, 0), "cuMemHostGetDevicePointer");
  if (!t.failure.empty()) {
    std::printf("  pinned host memory: %s\n", t.failure.c_str());
    return;
  }
  auto* host = static_cast<float*>(host_page);

  // By VMM, as Accord's GpuLocal memory is made.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t granularity = 0;
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr vmm = 0;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const bool mapped =
      t.ok(cuda.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           "cuMemGetAllocationGranularity") &&
      t.ok(cuda.cuMemCreate(&handle, granularity, &prop, 0), "cuMemCreate") &&
      t.ok(cuda.cuMemAddressReserve(&vmm, granularity, 0, 0, 0), "cuMemAddressReserve") &&
      t.ok(cuda.cuMemMap(vmm, granularity, 0, handle, 0), "cuMemMap") &&
      t.ok(cuda.cuMemSetAccess(vmm, granularity, &access, 1), "cuMemSetAccess") &&
      t.ok(cuda.cuMemsetD8Async(vmm, 0, granularity, owner.stream), "cuMemsetD8Async") &&
      t.ok(cuda.cuStreamSynchronize(owner.stream), "cuStreamSynchronize");
  if (mapped)
    try_sharing("VMM memory (cuMemCreate, mapped while the first was current)", t, owner, other, vmm, host,
                host_on_device);
  else
    std::printf("  %-58s failed: %s\n", "VMM memory (cuMemCreate)", t.failure.c_str());

  t.failure.clear();
  CUdeviceptr plain = 0;
  const bool allocated = t.ok(cuda.cuCtxSetCurrent(owner.context), "cuCtxSetCurrent") &&
                         t.ok(cuda.cuMemAlloc(&plain, 4096), "cuMemAlloc") &&
                         t.ok(cuda.cuMemsetD8Async(plain, 0, 4096, owner.stream), "cuMemsetD8Async") &&
                         t.ok(cuda.cuStreamSynchronize(owner.stream), "cuStreamSynchronize");
  if (allocated)
    try_sharing("cuMemAlloc memory of the first context", t, owner, other, plain, host, host_on_device);
  else
    std::printf("  %-58s failed: %s\n", "cuMemAlloc memory", t.failure.c_str());

  cuda.cuCtxSetCurrent(owner.context);
  if (plain != 0) cuda.cuMemFree(plain);
  if (vmm != 0) {
    cuda.cuMemUnmap(vmm, granularity);
    cuda.cuMemAddressFree(vmm, granularity);
  }
  if (handle != 0) cuda.cuMemRelease(handle);
  cuda.cuMemFreeHost(host_page);
}

}  // namespace accord::bench::gpu
