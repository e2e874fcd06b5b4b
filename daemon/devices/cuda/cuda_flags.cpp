// Completion flags and the graph tail that writes them. Why a flag and not only an event:
// cuEventQuery takes the driver's context lock and costs a call per poll, and with many
// tenants on one context the polls contend with every launch; a flag is a load. Why a
// kernel writes it by default: see CudaFlagWriter.
#include "daemon/devices/cuda/cuda_flags.h"

#include <algorithm>
#include <new>

#include "daemon/devices/cuda/cuda_status.h"
#include "daemon/devices/cuda/cuda_stream_pool.h"

namespace accord::devices::cuda {
namespace {

constexpr char kFlagKernelName[] = "accord_completion_flag";
constexpr char kEarlyFlagKernelName[] = "accord_completion_flag_early";

// The flag kernel: one thread fences at system scope (the region's results, in GPU or
// registered host memory, are visible before the flag is) and stores the value. PTX, so
// the driver compiles it for whatever GPU this is; written here rather than built with
// nvcc so that the daemon builds where the CUDA toolkit is absent.
// `early`: EarlyKernel's variant, launched once the region's last kernels have begun,
// first waits for them to end and for their writes to be visible (griddepcontrol.wait,
// PTX 7.8, sm_90; without programmatic predecessors it returns at once). A GPU before
// sm_90 refuses that module, and the probe falls back to Kernel.
std::string flag_kernel_ptx(bool early) {
  return std::string(early ? ".version 7.8\n.target sm_90\n" : ".version 7.0\n.target sm_52\n") +
         ".address_size 64\n\n.visible .entry " + (early ? kEarlyFlagKernelName : kFlagKernelName) +
         "(\n\t.param .u64 flag_word,\n\t.param .u32 flag_value\n)\n{\n"
         "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n"
         "\tld.param.u64 %rd1, [flag_word];\n\tld.param.u32 %r1, [flag_value];\n"
         "\tcvta.to.global.u64 %rd2, %rd1;\n" +
         (early ? "\tgriddepcontrol.wait;\n" : "") +
         "\tmembar.sys;\n\tst.volatile.global.u32 [%rd2], %r1;\n\tret;\n}\n";
}

CUstreamBatchMemOpParams write_one(CudaFlag flag) noexcept {
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = flag.device_address;
  op.writeValue.value = kFlagDone;
  op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // fenced: the region's writes land first
  return op;
}

CUDA_BATCH_MEM_OP_NODE_PARAMS write_params(const CudaContext& context, CUstreamBatchMemOpParams& op) noexcept {
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  params.ctx = context.context;
  params.count = 1;
  params.paramArray = &op;
  params.flags = 0;
  return params;
}

// The flag kernel's launch: one block of one thread. `args` must outlive the call that
// takes the parameters (the driver copies them there).
struct FlagKernelArgs {
  FlagKernelArgs() = default;
  FlagKernelArgs(const FlagKernelArgs&) = delete;  // `pointers` point into this object
  FlagKernelArgs& operator=(const FlagKernelArgs&) = delete;
  CUdeviceptr word = 0;
  unsigned value = kFlagDone;
  void* pointers[2] = {&word, &value};
};
CUDA_KERNEL_NODE_PARAMS kernel_params(CUfunction kernel, FlagKernelArgs& args) noexcept {
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = kernel;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = args.pointers;
  return params;
}

}  // namespace

Result<CompletionTail> CudaFlagPool::append_tail(CUgraph graph, const std::vector<CUgraphNode>& sinks, CudaFlag flag,
                                                 CUevent event, bool off_the_sms, const std::string& what) const {
  const CudaFlagWriter writer =
      writer_ != CudaFlagWriter::MemoryOp && off_the_sms && memory_op_works_ ? CudaFlagWriter::MemoryOp : writer_;
  return append_tail_as(writer, graph, sinks, flag, event, what);
}

bool CudaFlagPool::takes_early_edges(const std::vector<CUgraphNode>& sinks) const noexcept {
  const CudaSymbols& s = *context_.syms;
  if (sinks.empty() || s.cuGraphNodeGetType == nullptr || s.cuGraphAddDependencies == nullptr) return false;
  return std::all_of(sinks.begin(), sinks.end(), [&s](CUgraphNode sink) {
    CUgraphNodeType type{};
    return s.cuGraphNodeGetType(sink, &type) == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_KERNEL;
  });
}

Result<CompletionTail> CudaFlagPool::append_tail_as(CudaFlagWriter writer, CUgraph graph,
                                                    const std::vector<CUgraphNode>& sinks, CudaFlag flag,
                                                    CUevent event, const std::string& what) const {
  const CudaSymbols& s = *context_.syms;
  CompletionTail tail;
  tail.writer = writer;
  if (writer == CudaFlagWriter::EarlyKernel && !takes_early_edges(sinks)) tail.writer = CudaFlagWriter::Kernel;
  if (tail.writer != CudaFlagWriter::MemoryOp) {
    // The early kernel is added without dependencies, then tied to each sink's launch-
    // order port; the plain one follows the sinks' ends.
    const bool early = tail.writer == CudaFlagWriter::EarlyKernel;
    FlagKernelArgs args;
    args.word = flag.device_address;
    const CUDA_KERNEL_NODE_PARAMS params = kernel_params(kernel_of(tail.writer), args);
    ACCORD_CU_RETURN_IF_ERROR(s,
                              cuGraphAddKernelNode(&tail.write, graph, early ? nullptr : sinks.data(),
                                                   early ? 0 : sinks.size(), &params),
                              "adding the completion flag of " + what);
    CUgraphEdgeData edge{};
    edge.from_port = CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
    edge.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    if (early)
      for (CUgraphNode sink : sinks)
        ACCORD_CU_RETURN_IF_ERROR(s, cuGraphAddDependencies(graph, &sink, &tail.write, &edge, 1),
                                  "tying the early completion flag of " + what + " to its last kernels");
  } else {
    CUstreamBatchMemOpParams op = write_one(flag);
    const CUDA_BATCH_MEM_OP_NODE_PARAMS params = write_params(context_, op);
    ACCORD_CU_RETURN_IF_ERROR(s, cuGraphAddBatchMemOpNode(&tail.write, graph, sinks.data(), sinks.size(), &params),
                              "adding the completion flag of " + what);
  }
  if (event != nullptr)
    ACCORD_CU_RETURN_IF_ERROR(s, cuGraphAddEventRecordNode(&tail.record, graph, &tail.write, 1, event),
                              "adding the completion event of " + what);
  return tail;
}

Status CudaFlagPool::retarget_tail(CUgraphExec exec, const CompletionTail& tail, CudaFlag flag, CUevent event,
                                   const std::string& what) const {
  const CudaSymbols& s = *context_.syms;
  if (tail.writer != CudaFlagWriter::MemoryOp) {
    FlagKernelArgs args;
    args.word = flag.device_address;
    const CUDA_KERNEL_NODE_PARAMS params = kernel_params(kernel_of(tail.writer), args);
    ACCORD_CU_RETURN_IF_ERROR(s, cuGraphExecKernelNodeSetParams(exec, tail.write, &params),
                              "pointing " + what + " at its completion flag");
  } else {
    CUstreamBatchMemOpParams op = write_one(flag);
    const CUDA_BATCH_MEM_OP_NODE_PARAMS params = write_params(context_, op);
    ACCORD_CU_RETURN_IF_ERROR(s, cuGraphExecBatchMemOpNodeSetParams(exec, tail.write, &params),
                              "pointing " + what + " at its completion flag");
  }
  if (tail.record != nullptr)
    ACCORD_CU_RETURN_IF_ERROR(s, cuGraphExecEventRecordNodeSetEvent(exec, tail.record, event),
                              "pointing " + what + " at its completion event");
  return {};
}

Status CudaFlagPool::load_flag_kernel(bool early) {
  const CudaSymbols& s = *context_.syms;
  const std::string what = std::string("loading the ") + (early ? "early " : "") +
                           "completion flag kernel on gpu:" + std::to_string(context_.ordinal);
  if (s.cuGraphExecKernelNodeSetParams == nullptr)
    return unsupported_error(what + ": the driver has no cuGraphExecKernelNodeSetParams");
  ACCORD_CU_RETURN_IF_ERROR(s, cuCtxSetCurrent(context_.context), what);
  CUmodule module = nullptr;
  const std::string ptx = flag_kernel_ptx(early);
  ACCORD_CU_RETURN_IF_ERROR(s, cuModuleLoadDataEx(&module, ptx.c_str(), 0, nullptr, nullptr), what);
  UniqueCuModule& kept = early ? early_flag_module_ : flag_module_;
  kept = UniqueCuModule(s, context_.context, module);
  ACCORD_CU_RETURN_IF_ERROR(
      s, cuModuleGetFunction(early ? &early_flag_kernel_ : &flag_kernel_, module,
                             early ? kEarlyFlagKernelName : kFlagKernelName),
      what);
  return {};
}

bool CudaFlagPool::probe(CudaFlagWriter preferred) noexcept {
  const CudaSymbols& s = *context_.syms;
  usable_ = false;
  waitable_ = false;
  memory_op_works_ = false;
  writer_ = CudaFlagWriter::MemoryOp;
  if (s.cuMemHostAlloc == nullptr || s.cuMemFreeHost == nullptr || s.cuGraphAddEventRecordNode == nullptr ||
      s.cuGraphExecEventRecordNodeSetEvent == nullptr)
    return false;
  usable_ = true;  // acquire() refuses otherwise; settled below
  // The memory operation ends graphs without kernels, and every graph where the kernel's
  // tail fails (a driver may refuse the PTX).
  Probed memory_op;
  if (s.cuGraphAddBatchMemOpNode != nullptr && s.cuGraphExecBatchMemOpNodeSetParams != nullptr)
    memory_op = try_writer(CudaFlagWriter::MemoryOp);
  memory_op_works_ = memory_op.works;
  // EarlyKernel also needs Kernel: regions whose sinks are not all kernels end with it.
  Probed kernel;
  Probed early;
  if (preferred != CudaFlagWriter::MemoryOp && load_flag_kernel(false).ok()) {
    kernel = try_writer(CudaFlagWriter::Kernel);
    if (kernel.works && preferred == CudaFlagWriter::EarlyKernel && load_flag_kernel(true).ok())
      early = try_writer(CudaFlagWriter::EarlyKernel);
  }
  if (!early.works) {
    early_flag_kernel_ = nullptr;  // not used: unloaded, so that nothing stale is kept
    early_flag_module_ = UniqueCuModule();
  }
  if (!kernel.works) {
    flag_kernel_ = nullptr;
    flag_module_ = UniqueCuModule();
  }
  writer_ = early.works    ? CudaFlagWriter::EarlyKernel
            : kernel.works ? CudaFlagWriter::Kernel
                           : CudaFlagWriter::MemoryOp;
  usable_ = kernel.works || memory_op.works;
  // Successors wait on flags only where every tail they may follow can be waited on.
  waitable_ = usable_ && (!kernel.works || kernel.waitable) && (!early.works || early.waitable) &&
              (!memory_op.works || memory_op.waitable);
  return usable_;
}

CudaFlagPool::Probed CudaFlagPool::try_writer(CudaFlagWriter writer) noexcept {
  const CudaSymbols& s = *context_.syms;
  Probed probed;
  // Two flags: the graph is built writing the first and pointed at the second, as every
  // slot past the first is; only the second may read 1 after the launch.
  auto built = acquire();
  auto target = acquire();
  // EarlyKernel's tail follows a kernel, as in a region: the plain flag kernel writing a
  // third flag, which must read 1 too.
  const bool early = writer == CudaFlagWriter::EarlyKernel;
  auto before = early ? acquire() : Result<CudaFlag>(CudaFlag{});
  if (built.ok() && target.ok() && before.ok() && context_.make_current() == CUDA_SUCCESS) {
    CUgraph raw_graph = nullptr;
    CUevent raw_event = nullptr;
    CUstream raw_stream = nullptr;
    CUgraphExec raw_exec = nullptr;
    if (s.cuGraphCreate(&raw_graph, 0) == CUDA_SUCCESS) {
      const UniqueCuGraph graph(s, context_.context, raw_graph);
      if (s.cuEventCreate(&raw_event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
        const UniqueCuEvent event(s, context_.context, raw_event);
        std::vector<CUgraphNode> sinks;
        FlagKernelArgs before_args;
        if (early) {
          before_args.word = before.value().device_address;
          const CUDA_KERNEL_NODE_PARAMS params = kernel_params(flag_kernel_, before_args);
          CUgraphNode node = nullptr;
          if (s.cuGraphAddKernelNode(&node, graph.get(), nullptr, 0, &params) == CUDA_SUCCESS) sinks.push_back(node);
        }
        // Without its sink the early tail would be the plain kernel's, and not count.
        auto tail = append_tail_as(writer, graph.get(), sinks, built.value(), event.get(), "the flag probe");
        if (tail.ok() && tail.value().writer == writer &&
            s.cuGraphInstantiateWithFlags(&raw_exec, graph.get(), 0) == CUDA_SUCCESS) {
          const UniqueCuGraphExec exec(s, context_.context, raw_exec);
          if (retarget_tail(exec.get(), tail.value(), target.value(), event.get(), "the flag probe").ok() &&
              create_stream(s, &raw_stream, 0) == CUDA_SUCCESS) {
            const UniqueCuStream stream(s, context_.context, raw_stream);
            probed.works = s.cuGraphLaunch(exec.get(), stream.get()) == CUDA_SUCCESS &&
                           s.cuStreamSynchronize(stream.get()) == CUDA_SUCCESS &&
                           s.cuEventQuery(event.get()) == CUDA_SUCCESS &&
                           target.value().word->load(std::memory_order_acquire) == kFlagDone &&
                           built.value().word->load(std::memory_order_acquire) == 0 &&
                           (!early || before.value().word->load(std::memory_order_acquire) == kFlagDone);
            // The flag reads 1 now, so a wait on it passes at once where the driver can wait.
            probed.waitable = probed.works && s.cuStreamWaitValue32 != nullptr &&
                              s.cuStreamWaitValue32(stream.get(), target.value().device_address, kFlagDone,
                                                    CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS &&
                              s.cuStreamSynchronize(stream.get()) == CUDA_SUCCESS;
          }
        }
      }
    }
  }
  if (built.ok()) release(built.value());
  if (target.ok()) release(target.value());
  if (early && before.ok()) release(before.value());
  return probed;
}

Result<CudaFlag> CudaFlagPool::acquire() {
  if (words_ != nullptr) return words_->acquire();
  if (!usable_) return unsupported_error("cuda: completion flags are not available on gpu:" + std::to_string(context_.ordinal));
  const std::lock_guard lock(mu_);
  if (free_.empty()) ACCORD_RETURN_IF_ERROR(add_page());
  const CudaFlag flag = free_.back();
  free_.pop_back();
  flag.word->store(0, std::memory_order_relaxed);
  return flag;
}

Status CudaFlagPool::add_page() {
  const CudaSymbols& s = *context_.syms;
  const std::string what = "allocating completion flags on gpu:" + std::to_string(context_.ordinal);
  ACCORD_CU_RETURN_IF_ERROR(s, cuCtxSetCurrent(context_.context), what);
  if (!arena_tried_) {
    arena_tried_ = true;
    // Without an arena flags still work in this process; only sharing them is lost.
    auto arena = common::MemfdPages::create(kArenaBytes, "completion flags");
    if (arena.ok()) arena_ = std::move(arena).value();
  }
  std::byte* page = nullptr;
  std::uint64_t arena_offset = kNoWordOffset;
  if (arena_ != nullptr && arena_used_ + kPageBytes <= kArenaBytes) {
    page = arena_->host_address() + arena_used_;
    ACCORD_CU_RETURN_IF_ERROR(
        s, cuMemHostRegister(page, kPageBytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE), what);
    registrations_.emplace_back(s, context_.context, page);
    arena_offset = arena_used_;
    arena_used_ += kPageBytes;
  } else {
    void* raw = nullptr;
    ACCORD_CU_RETURN_IF_ERROR(s, cuMemHostAlloc(&raw, kPageBytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
                              what);
    pages_.emplace_back(s, context_.context, raw);
    page = static_cast<std::byte*>(raw);
  }
  CUdeviceptr device = 0;
  ACCORD_CU_RETURN_IF_ERROR(s, cuMemHostGetDevicePointer(&device, page, 0), what);
  // Room for every flag there is: release() never allocates.
  free_.reserve((registrations_.size() + pages_.size()) * (kPageBytes / kStride));
  for (std::size_t offset = 0; offset < kPageBytes; offset += kStride) {
    auto* word = new (page + offset) std::atomic<std::uint32_t>(0);
    free_.push_back(
        CudaFlag{word, device + offset, arena_offset == kNoWordOffset ? kNoWordOffset : arena_offset + offset});
  }
  return {};
}

int CudaFlagPool::arena_fd() const noexcept {
  if (words_ != nullptr) return words_->arena_fd();
  const std::lock_guard lock(mu_);
  return arena_ != nullptr ? arena_->export_fd() : -1;
}

void CudaFlagPool::release(CudaFlag flag) noexcept {
  if (!flag) return;
  if (words_ != nullptr) return words_->release(flag);
  const std::lock_guard lock(mu_);
  free_.push_back(flag);
}

}  // namespace accord::devices::cuda
