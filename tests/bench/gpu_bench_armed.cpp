// ArmedChain: see gpu_bench_armed.h.
#include "tests/bench/gpu_bench_armed.h"

#include <cstdio>
#include <cstdlib>

#include "tests/bench/gpu_bench_chains.h"

namespace accord::bench::gpu {
namespace {
constexpr std::size_t kFlagWord = 16;  // its own cache line, away from the doorbell
constexpr std::uint32_t kCancelled = ~0u;
}  // namespace

ArmedChain::ArmedChain(const cu::CudaSymbols& cuda, std::size_t kernels, std::uint64_t spin_ns, int priority)
    : cuda_(cuda), kernels_(kernels) {
  CUdevice device = 0;
  ok(cuda.cuDeviceGet(&device, 0), "cuDeviceGet");
  ok(cuda.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  ok(cuda.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  const std::vector<std::byte> image = ptx();
  std::vector<char> text(reinterpret_cast<const char*>(image.data()), reinterpret_cast<const char*>(image.data()) + image.size());
  text.push_back('\0');
  ok(cuda.cuModuleLoadDataEx(&module_, text.data(), 0, nullptr, nullptr), "cuModuleLoadDataEx");
  CUfunction step = nullptr, flag = nullptr, gate = nullptr;
  ok(cuda.cuModuleGetFunction(&step, module_, "accord_bench_step"), "cuModuleGetFunction(step)");
  ok(cuda.cuModuleGetFunction(&flag, module_, "accord_bench_flag"), "cuModuleGetFunction(flag)");
  ok(cuda.cuModuleGetFunction(&gate, module_, "accord_bench_gate"), "cuModuleGetFunction(gate)");
  const std::size_t taken_offset = (kernels + 1) * 256;
  ok(cuda.cuMemAlloc(&buffers_, taken_offset + 256), "cuMemAlloc");
  ok(cuda.cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, priority), "cuStreamCreateWithPriority");
  ok(cuda.cuMemsetD8Async(buffers_, 0, taken_offset + 256, stream_), "cuMemsetD8Async");
  ok(cuda.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  void* host = nullptr;
  ok(cuda.cuMemHostAlloc(&host, 256, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
  host_words_ = static_cast<std::atomic<std::uint32_t>*>(host);
  host_words_[0].store(0);
  host_words_[kFlagWord].store(0);
  ok(cuda.cuMemHostGetDevicePointer(&device_words_, host, 0), "cuMemHostGetDevicePointer");

  ok(cuda.cuGraphCreate(&graph_, 0), "cuGraphCreate");
  CUgraphConditionalHandle handle = 0;
  ok(cuda.cuGraphConditionalHandleCreate(&handle, graph_, context_, 0, CU_GRAPH_COND_ASSIGN_DEFAULT),
     "cuGraphConditionalHandleCreate");
  const auto one_thread = [](CUDA_KERNEL_NODE_PARAMS& node) {
    node.gridDimX = node.gridDimY = node.gridDimZ = 1;
    node.blockDimX = node.blockDimY = node.blockDimZ = 1;
  };
  CUdeviceptr doorbell = device_words_, taken = buffers_ + taken_offset;
  void* gate_args[] = {&handle, &doorbell, &taken};
  CUDA_KERNEL_NODE_PARAMS gate_node{};
  gate_node.func = gate;
  one_thread(gate_node);
  gate_node.kernelParams = gate_args;
  CUgraphNode gated = nullptr;
  ok(cuda.cuGraphAddKernelNode(&gated, graph_, nullptr, 0, &gate_node), "cuGraphAddKernelNode(gate)");
  CUgraphNodeParams conditional{};
  conditional.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  conditional.conditional.handle = handle;
  conditional.conditional.type = CU_GRAPH_COND_TYPE_IF;
  conditional.conditional.size = 1;
  conditional.conditional.ctx = context_;
  CUgraphNode branch = nullptr;
  ok(cuda.cuGraphAddNode(&branch, graph_, &gated, nullptr, 1, &conditional), "cuGraphAddNode(conditional)");
  CUgraph body = conditional.conditional.phGraph_out[0];

  CUgraphNode previous = nullptr;
  params_.resize(kernels);
  for (std::size_t i = 0; i < kernels; ++i) {
    params_[i] = {buffers_ + (i + 1) * 256, buffers_ + i * 256, spin_ns};
    void* args[] = {&params_[i].out, &params_[i].in, &params_[i].spin};
    CUDA_KERNEL_NODE_PARAMS node{};
    node.func = step;
    node.gridDimX = node.gridDimY = node.gridDimZ = 1;
    node.blockDimX = 32;
    node.blockDimY = node.blockDimZ = 1;
    node.kernelParams = args;
    CUgraphNode added = nullptr;
    ok(cuda.cuGraphAddKernelNode(&added, body, previous ? &previous : nullptr, previous ? 1 : 0, &node),
       "cuGraphAddKernelNode(step)");
    previous = added;
  }
  CUdeviceptr flag_word = device_words_ + kFlagWord * sizeof(std::uint32_t);
  void* flag_args[] = {&flag_word};
  CUDA_KERNEL_NODE_PARAMS flag_node{};
  flag_node.func = flag;
  one_thread(flag_node);
  flag_node.kernelParams = flag_args;
  CUgraphNode written = nullptr;
  ok(cuda.cuGraphAddKernelNode(&written, body, previous ? &previous : nullptr, previous ? 1 : 0, &flag_node),
     "cuGraphAddKernelNode(flag)");
  ok(cuda.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
  ok(cuda.cuGraphLaunch(exec_, stream_), "cuGraphLaunch(arm)");
}

void ArmedChain::cancel() {
  ok(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  host_words_[0].store(kCancelled, std::memory_order_release);
  ok(cuda_.cuStreamSynchronize(stream_), "cuStreamSynchronize(cancel)");
  cancelled_ = true;
}

ArmedChain::~ArmedChain() {
  if (!cancelled_) cancel();
  cuda_.cuStreamDestroy(stream_);
  cuda_.cuGraphExecDestroy(exec_);
  cuda_.cuGraphDestroy(graph_);
  cuda_.cuMemFreeHost(host_words_);
  cuda_.cuMemFree(buffers_);
  cuda_.cuModuleUnload(module_);
  CUdevice device = 0;
  cuda_.cuDeviceGet(&device, 0);
  cuda_.cuDevicePrimaryCtxRelease(device);
}

void ArmedChain::bind_thread() const { ok(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

void ArmedChain::run_once() const {
  std::atomic<std::uint32_t>& flag = host_words_[kFlagWord];
  flag.store(0, std::memory_order_relaxed);
  host_words_[0].store(++ticket_, std::memory_order_release);
  ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch(arm)");
  while (flag.load(std::memory_order_acquire) == 0) {
  }
}

float ArmedChain::result() const {
  float value = 0;
  // A launch may still be armed and waiting: read on a stream of its own.
  CUstream reader = nullptr;
  ok(cuda_.cuStreamCreate(&reader, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  ok(cuda_.cuMemcpyDtoHAsync(&value, buffers_ + kernels_ * 256, sizeof value, reader), "cuMemcpyDtoHAsync");
  ok(cuda_.cuStreamSynchronize(reader), "cuStreamSynchronize");
  cuda_.cuStreamDestroy(reader);
  return value;
}

void ArmedChain::ok(CUresult r, const char* what) const {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuda_.cuGetErrorName(r, &name);
  std::fprintf(stderr, "benchmark setup failed: %s: %s\n", what, name ? name : "?");
  std::exit(1);
}

}  // namespace accord::bench::gpu
