// The two chains of gpu_bench_chains.h: the direct CUDA graph and the Accord graph.
#include "tests/bench/gpu_bench_chains.h"

#include "tests/support/environment_options.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <cstring>
#include <optional>

extern const unsigned char accord_gpu_bench_ptx[];
extern const unsigned long accord_gpu_bench_ptx_size;

namespace accord::bench::gpu {

std::vector<std::byte> ptx() {
  const auto* p = reinterpret_cast<const std::byte*>(accord_gpu_bench_ptx);
  return {p, p + accord_gpu_bench_ptx_size};
}

KernelContract step_contract(std::uint64_t spin_ns) {
  KernelContract contract;
  contract.bindings = {BindingContract{4, 4, Access::Write, "out f32[1]"}, BindingContract{4, 4, Access::Read, "in f32[1]"}};
  contract.constants.resize(sizeof spin_ns);
  std::memcpy(contract.constants.data(), &spin_ns, sizeof spin_ns);
  return contract;
}

DirectChain::DirectChain(const cu::CudaSymbols& cuda, std::size_t kernels, std::uint64_t spin_ns,
                         std::array<unsigned, 3> grid, std::array<unsigned, 3> block, int priority, DirectTail tail,
                         DirectWait wait, CUgreenCtx green, DirectContext context)
    : cuda_(cuda), wait_(wait), green_(green), own_context_(context == DirectContext::Own) {
  CUdevice device = 0;
  ok(cuda.cuDeviceGet(&device, 0), "cuDeviceGet");
  if (own_context_) {
    if (cuda.cuCtxCreate == nullptr) ok(CUDA_ERROR_NOT_SUPPORTED, "cuCtxCreate (absent in this driver)");
    ok(cuda.cuCtxCreate(&context_, nullptr, 0, device), "cuCtxCreate");
  } else if (green != nullptr)
    ok(cuda.cuCtxFromGreenCtx(&context_, green), "cuCtxFromGreenCtx");
  else
    ok(cuda.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  ok(cuda.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  const std::vector<std::byte> image = ptx();
  std::vector<char> text(reinterpret_cast<const char*>(image.data()), reinterpret_cast<const char*>(image.data()) + image.size());
  text.push_back('\0');
  ok(cuda.cuModuleLoadDataEx(&module_, text.data(), 0, nullptr, nullptr), "cuModuleLoadDataEx");
  ok(cuda.cuModuleGetFunction(&function_, module_, "accord_bench_step"), "cuModuleGetFunction");
  ok(cuda.cuMemAlloc(&buffers_, (kernels + 1) * 256), "cuMemAlloc");
  ok(cuda.cuGraphCreate(&graph_, 0), "cuGraphCreate");
  CUgraphNode previous = nullptr;
  params_.resize(kernels);
  for (std::size_t i = 0; i < kernels; ++i) {
    params_[i] = {buffers_ + (i + 1) * 256, buffers_ + i * 256, spin_ns};
    void* args[] = {&params_[i].out, &params_[i].in, &params_[i].spin};
    CUDA_KERNEL_NODE_PARAMS node{};
    node.func = function_;
    node.gridDimX = grid[0];
    node.gridDimY = grid[1];
    node.gridDimZ = grid[2];
    node.blockDimX = block[0];
    node.blockDimY = block[1];
    node.blockDimZ = block[2];
    node.kernelParams = args;
    CUgraphNode added = nullptr;
    ok(cuda.cuGraphAddKernelNode(&added, graph_, previous ? &previous : nullptr, previous ? 1 : 0, &node),
       "cuGraphAddKernelNode");
    previous = added;
  }
  if (tail != DirectTail::None) {
    void* host = nullptr;
    ok(cuda.cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    flag_ = static_cast<std::atomic<std::uint32_t>*>(host);
    flag_->store(0);
    ok(cuda.cuMemHostGetDevicePointer(&device_flag_, host, 0), "cuMemHostGetDevicePointer");
  }
  CUgraphNode written = nullptr;
  if (tail == DirectTail::KernelFlag) {
    ok(cuda.cuModuleGetFunction(&flag_function_, module_, "accord_bench_flag"), "cuModuleGetFunction");
    void* args[] = {&device_flag_};
    CUDA_KERNEL_NODE_PARAMS node{};
    node.func = flag_function_;
    node.gridDimX = node.gridDimY = node.gridDimZ = 1;
    node.blockDimX = node.blockDimY = node.blockDimZ = 1;
    node.kernelParams = args;
    ok(cuda.cuGraphAddKernelNode(&written, graph_, previous ? &previous : nullptr, previous ? 1 : 0, &node),
       "cuGraphAddKernelNode");
  } else if (tail != DirectTail::None) {
    CUstreamBatchMemOpParams op{};
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = device_flag_;
    op.writeValue.value = 1;
    op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    CUDA_BATCH_MEM_OP_NODE_PARAMS write{};
    write.ctx = context_;
    write.count = 1;
    write.paramArray = &op;
    ok(cuda.cuGraphAddBatchMemOpNode(&written, graph_, previous ? &previous : nullptr, previous ? 1 : 0, &write),
       "cuGraphAddBatchMemOpNode");
    if (tail == DirectTail::FlagEvent) {
      ok(cuda.cuEventCreate(&event_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
      CUgraphNode recorded = nullptr;
      ok(cuda.cuGraphAddEventRecordNode(&recorded, graph_, &written, 1, event_), "cuGraphAddEventRecordNode");
    }
  }
  ok(cuda.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
  if (wait == DirectWait::SpinOnEvent) ok(cuda.cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  if (green != nullptr)
    ok(cuda.cuGreenCtxStreamCreate(&stream_, green, CU_STREAM_NON_BLOCKING, priority), "cuGreenCtxStreamCreate");
  else
    ok(cuda.cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, priority), "cuStreamCreateWithPriority");
}
DirectChain::~DirectChain() {
  cuda_.cuCtxSetCurrent(context_);
  cuda_.cuStreamSynchronize(stream_);
  cuda_.cuStreamDestroy(stream_);
  cuda_.cuGraphExecDestroy(exec_);
  cuda_.cuGraphDestroy(graph_);
  if (event_ != nullptr) cuda_.cuEventDestroy(event_);
  if (done_ != nullptr) cuda_.cuEventDestroy(done_);
  if (flag_ != nullptr) cuda_.cuMemFreeHost(flag_);
  cuda_.cuMemFree(buffers_);
  cuda_.cuModuleUnload(module_);
  if (green_ != nullptr) {
    cuda_.cuGreenCtxDestroy(green_);
    return;
  }
  if (own_context_) {
    cuda_.cuCtxDestroy(context_);
    return;
  }
  CUdevice device = 0;
  cuda_.cuDeviceGet(&device, 0);
  cuda_.cuDevicePrimaryCtxRelease(device);
}

void DirectChain::bind_thread() const { ok(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

void DirectChain::run_once() const {
  if (wait_ == DirectWait::SpinOnFlag) {
    flag_->store(0, std::memory_order_relaxed);
    ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
    while (flag_->load(std::memory_order_acquire) == 0) {
    }
    return;
  }
  if (wait_ == DirectWait::SpinOnEvent) {
    ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
    ok(cuda_.cuEventRecord(done_, stream_), "cuEventRecord");
    CUresult r = CUDA_ERROR_NOT_READY;
    while ((r = cuda_.cuEventQuery(done_)) == CUDA_ERROR_NOT_READY) {
    }
    ok(r, "cuEventQuery");
    return;
  }
  ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
  ok(cuda_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void DirectChain::launch() const {
  flag_->store(0, std::memory_order_relaxed);
  ok(cuda_.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
}

void DirectChain::ok(CUresult r, const char* what) const {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuda_.cuGetErrorName(r, &name);
  std::fprintf(stderr, "benchmark setup failed: %s: %s\n", what, name ? name : "?");
  std::exit(1);
}

Runtime open_runtime(int priority, const DeviceOptions& device_options, const std::string& executor) {
  RuntimeOptions options;
  options.priority = priority;
  options.devices = {"cuda"};
  options.device_options = device_options;
  options.gpu_executor = executor;
  options.forecast_sleep = forecast_sleep_from_environment();
  return unwrap(Runtime::embedded(options), "Runtime::embedded");
}

AccordChain::AccordChain(Runtime opened, std::size_t kernels, std::uint64_t spin_ns,
                         std::array<std::uint32_t, 3> grid, std::array<std::uint32_t, 3> block)
    : runtime(std::move(opened)) {
  GpuKernelImage image;
  image.image = ptx();
  image.entry = "accord_bench_step";
  image.grid = grid;
  image.block = block;
  kernel = unwrap(runtime.load_gpu_kernel(0, image, step_contract(spin_ns)), "load_gpu_kernel");
  for (std::size_t i = 0; i <= kernels; ++i)
    buffers.push_back(unwrap(runtime.allocate(256, MemoryPlacement::gpu_local(0)), "allocate"));
  Graph graph = runtime.graph();
  for (std::size_t i = 0; i < kernels; ++i)
    unwrap(graph.gpu(kernel, {unwrap(buffers[i + 1].slice(0, 4), "slice"), unwrap(buffers[i].slice(0, 4), "slice")}),
           "Graph::gpu");
  exe = unwrap(std::move(graph).prepare(), "prepare");
}
void AccordChain::run_once() const {
  Completion c = unwrap(exe.submit(), "submit");
  check(c.wait(), "wait");
  if (profiles != nullptr)
    if (std::optional<CompletionProfile> p = c.profile()) profiles->push_back(p->elapsed_us);
}

ForecastSleep forecast_sleep_from_environment() {
  const char* text = std::getenv("ACCORD_BENCH_FORECAST_SLEEP");
  const std::string value = text != nullptr ? text : "daemon";
  if (value == "never" || value == "0") return ForecastSleep::Never;
  if (value == "daemon") return ForecastSleep::ThroughDaemon;
  if (value == "always" || value == "1") return ForecastSleep::Always;
  std::fprintf(stderr, "ACCORD_BENCH_FORECAST_SLEEP must be never (0), daemon or always (1), not '%s'\n", value.c_str());
  std::exit(2);
}

DeviceOptions options_from_environment() {
  return accord::testing::options_from_environment("ACCORD_BENCH_CUDA_OPTIONS").options;
}

std::vector<std::string> accordd_args_from_environment() {
  std::vector<std::string> args;
  if (const char* extra = std::getenv("ACCORD_BENCH_ACCORDD_ARGS")) {
    std::istringstream words(extra);
    for (std::string word; words >> word;) args.push_back(word);
  }
  return args;
}

}  // namespace accord::bench::gpu
