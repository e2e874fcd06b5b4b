// Lowering a run into a CUDA graph. Nodes are added in recording order, each with the
// nodes of its incoming edges as dependencies (the request's edges are sorted by
// `after`, and `before` < `after` in recording order), so the graph has exactly the
// inferred edges: independent operations run concurrently.
#include "daemon/devices/cuda/cuda_region.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_code.h"
#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {
namespace {

bool gpu_lane(LaneKind lane) noexcept {
  return lane == LaneKind::Upload || lane == LaneKind::Compute || lane == LaneKind::Download;
}

// The device address of a binding's first byte, or Invalid naming it.
Result<CUdeviceptr> address_of(const std::string& what, std::size_t index, const OperationBinding& binding) {
  const std::string name = what + " binding " + std::to_string(index);
  if (binding.address == 0)
    return invalid_error(name + " has no address on this GPU (memory neither on it nor admitted to it)");
  if (binding.memory != nullptr &&
      (binding.offset > binding.memory->bytes() || binding.length > binding.memory->bytes() - binding.offset))
    return invalid_error(name + ": bytes [" + std::to_string(binding.offset) + ", +" + std::to_string(binding.length) +
                         ") lie outside its memory of " + std::to_string(binding.memory->bytes()) + " bytes");
  return static_cast<CUdeviceptr>(binding.address + binding.offset);
}

Status add_fill(const CudaContext& context, CUgraph graph, const std::string& what, const Operation& op,
                const std::vector<CUgraphNode>& deps, CUgraphNode& node) {
  const CudaSymbols& syms = *context.syms;
  if (op.bindings.size() != 1)
    return invalid_error(what + ": a fill takes 1 binding, got " + std::to_string(op.bindings.size()));
  ACCORD_ASSIGN_OR_RETURN(const CUdeviceptr dst, address_of(what, 0, op.bindings[0]));
  if (op.bindings[0].length == 0) {
    ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddEmptyNode(&node, graph, deps.data(), deps.size()), what);
    return Status();
  }
  CUDA_MEMSET_NODE_PARAMS params{};
  params.dst = dst;
  params.pitch = op.bindings[0].length;  // unused for one row
  params.value = op.fill_value;
  params.elementSize = 1;
  params.width = op.bindings[0].length;
  params.height = 1;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddMemsetNode(&node, graph, deps.data(), deps.size(), &params, context.context),
                            what);
  return Status();
}

Status add_copy(const CudaContext& context, CUgraph graph, const std::string& what, const Operation& op,
                const std::vector<CUgraphNode>& deps, CUgraphNode& node) {
  const CudaSymbols& syms = *context.syms;
  if (op.bindings.size() != 2)
    return invalid_error(what + ": a copy takes 2 bindings (destination, source), got " +
                         std::to_string(op.bindings.size()));
  const OperationBinding& dst = op.bindings[0];
  const OperationBinding& src = op.bindings[1];
  if (dst.length != src.length)
    return invalid_error(what + ": destination of " + std::to_string(dst.length) + " bytes and source of " +
                         std::to_string(src.length) + " bytes differ in length");
  ACCORD_ASSIGN_OR_RETURN(const CUdeviceptr dst_address, address_of(what, 0, dst));
  ACCORD_ASSIGN_OR_RETURN(const CUdeviceptr src_address, address_of(what, 1, src));
  if (dst.length == 0) {
    ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddEmptyNode(&node, graph, deps.data(), deps.size()), what);
    return Status();
  }
  // Device memory and registered host pages are both addresses in the unified address
  // space, so UNIFIED lets the driver pick the direction (the runtime's cudaMemcpyDefault).
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcDevice = src_address;
  copy.srcPitch = src.length;
  copy.srcHeight = 1;
  copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.dstDevice = dst_address;
  copy.dstPitch = dst.length;
  copy.dstHeight = 1;
  copy.WidthInBytes = dst.length;
  copy.Height = 1;
  copy.Depth = 1;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddMemcpyNode(&node, graph, deps.data(), deps.size(), &copy, context.context),
                            what);
  return Status();
}

Status add_kernel(const CudaContext& context, CUgraph graph, const std::string& what, const Operation& op,
                  const std::vector<CUgraphNode>& deps, CUgraphNode& node) {
  const CudaSymbols& syms = *context.syms;
  const auto* code = dynamic_cast<const CudaCode*>(op.code);
  if (code == nullptr)
    return invalid_error(what + (op.code == nullptr ? ": a kernel operation has no code"
                                                    : ": kernel '" + op.code->name() + "' was not loaded by the cuda backend"));
  const KernelContract& contract = code->contract();
  if (op.bindings.size() != contract.bindings.size())
    return invalid_error(what + ": kernel '" + code->name() + "' takes " + std::to_string(contract.bindings.size()) +
                         " bindings, got " + std::to_string(op.bindings.size()));
  // The parameter buffer: binding addresses at 8 * i, then the constants. The driver
  // copies the values when the node is added.
  std::vector<std::byte> buffer(code->parameter_bytes());
  for (std::size_t i = 0; i < op.bindings.size(); ++i) {
    ACCORD_ASSIGN_OR_RETURN(const CUdeviceptr address, address_of(what, i, op.bindings[i]));
    const std::uint64_t value = address;
    std::memcpy(buffer.data() + 8 * i, &value, sizeof(value));
  }
  if (!contract.constants.empty())
    std::memcpy(buffer.data() + 8 * op.bindings.size(), contract.constants.data(), contract.constants.size());
  std::vector<void*> parameters;
  parameters.reserve(code->parameter_offsets().size());
  for (std::size_t offset : code->parameter_offsets()) parameters.push_back(buffer.data() + offset);

  ACCORD_ASSIGN_OR_RETURN(const CUfunction function, code->function_in(context));
  // Loading into another context made that one current; the graph is built in `context`.
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = function;
  params.gridDimX = code->grid()[0];
  params.gridDimY = code->grid()[1];
  params.gridDimZ = code->grid()[2];
  params.blockDimX = code->block()[0];
  params.blockDimY = code->block()[1];
  params.blockDimZ = code->block()[2];
  params.sharedMemBytes = code->shared_bytes();
  params.kernelParams = parameters.empty() ? nullptr : parameters.data();
  params.extra = nullptr;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddKernelNode(&node, graph, deps.data(), deps.size(), &params),
                            what + ": kernel '" + code->name() + "'");
  return Status();
}

}  // namespace

CudaRegion::~CudaRegion() {
  if (flags_ == nullptr) return;
  for (std::uint32_t s = 0; s < slot_count_; ++s) flags_->release(slots_[s].flag);
}

Result<std::unique_ptr<CudaRegion>> CudaRegion::lower(const CudaContext& context, const RegionRequest& request,
                                                      CudaFlagPool* flags, bool tail_event,
                                                      std::uint32_t tenant_context) {
  const CudaSymbols& syms = *context.syms;
  const std::string device = "gpu:" + std::to_string(context.ordinal);
  if (request.slots == 0) return invalid_error("cuda: a region on " + device + " needs at least 1 submission slot");
  const std::span<const Operation> ops = request.operations;
  auto region = std::unique_ptr<CudaRegion>(new CudaRegion());
  region->lane_ = ops.empty() ? LaneKind::Compute : ops.front().lane;
  region->priority_ = request.priority;
  region->tenant_context_ = tenant_context;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!gpu_lane(ops[i].lane))
      return invalid_error("operation " + std::to_string(i) + " (graph node " + std::to_string(ops[i].node) + "): " +
                           device + " has no " + std::string(to_string(ops[i].lane)) + " lane");
    if (ops[i].lane != region->lane_)
      return invalid_error("operation " + std::to_string(i) + ": lane '" + std::string(to_string(ops[i].lane)) +
                           "' differs from the run's lane '" + std::string(to_string(region->lane_)) + "'");
  }

  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "lowering a region on " + device);
  CUgraph graph = nullptr;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphCreate(&graph, 0), "creating the graph of a region on " + device);
  region->graph_ = UniqueCuGraph(syms, context.context, graph);

  std::vector<CUgraphNode> nodes(ops.size(), nullptr);
  std::vector<CUgraphNode> deps;
  std::size_t edge = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string what = "operation " + std::to_string(i) + " (graph node " + std::to_string(ops[i].node) + ")";
    deps.clear();
    for (; edge < request.edges.size() && request.edges[edge].after <= i; ++edge) {
      const OperationEdge& e = request.edges[edge];
      if (e.after != i || e.before >= i)
        return invalid_error("edge " + std::to_string(e.before) + " -> " + std::to_string(e.after) + " of a run of " +
                             std::to_string(ops.size()) + " operations does not point forward (edges must be sorted "
                             "by 'after')");
      deps.push_back(nodes[e.before]);
    }
    switch (ops[i].kind) {
      case OpKind::Fill: ACCORD_RETURN_IF_ERROR(add_fill(context, graph, what, ops[i], deps, nodes[i])); break;
      case OpKind::Copy: ACCORD_RETURN_IF_ERROR(add_copy(context, graph, what, ops[i], deps, nodes[i])); break;
      case OpKind::Kernel: ACCORD_RETURN_IF_ERROR(add_kernel(context, graph, what, ops[i], deps, nodes[i])); break;
      default: return invalid_error(what + ": unknown operation kind " + std::to_string(static_cast<int>(ops[i].kind)));
    }
  }
  if (edge != request.edges.size())
    return invalid_error("edge " + std::to_string(request.edges[edge].before) + " -> " +
                         std::to_string(request.edges[edge].after) + " names an operation outside the run of " +
                         std::to_string(ops.size()));
  // The kernel tail needs an SM: behind a neighbour whose blocks fill every SM it waits
  // for one to free up, which doubled a priority session's 1-kernel graph on the H200
  // (50.7 -> 101.5 us p50 in the noisy-neighbour row, RESULTS.md session 22). Sessions
  // above the default priority and regions without kernels end with the memory operation.
  const bool has_kernels =
      std::any_of(ops.begin(), ops.end(), [](const Operation& op) { return op.kind == OpKind::Kernel; });
  const bool tail_off_the_sms = !has_kernels || request.priority > 0;
  std::vector<CUgraphNode> sinks;  // nodes nothing in the run waits on: the tail follows them
  if (ops.empty()) {  // an empty run still completes through the same path
    CUgraphNode empty = nullptr;
    ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphAddEmptyNode(&empty, graph, nullptr, 0), "an empty region on " + device);
    sinks.push_back(empty);
  } else {
    std::vector<bool> waited_on(ops.size(), false);
    for (const OperationEdge& e : request.edges) waited_on[e.before] = true;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (!waited_on[i]) sinks.push_back(nodes[i]);
  }

  region->slot_count_ = request.slots;
  region->slots_ = std::make_unique<CudaSlot[]>(request.slots);
  const bool use_flags = flags != nullptr && flags->usable();
  region->flags_ = use_flags ? flags : nullptr;  // from here on the destructor returns what the slots took
  for (std::uint32_t s = 0; s < request.slots; ++s) {
    CUevent event = nullptr;
    ACCORD_CU_RETURN_IF_ERROR(syms, cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                              "creating the event of slot " + std::to_string(s) + " of a region on " + device);
    region->slots_[s].done = UniqueCuEvent(syms, context.context, event);
    region->slots_[s].context = context.context;
    if (use_flags) {
      ACCORD_ASSIGN_OR_RETURN(region->slots_[s].flag, flags->acquire());
      // A new page of flags is registered in the context that holds the words (the
      // device's own, cuda.tenant_contexts), which acquire() leaves current.
      ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "lowering a region on " + device);
    }
  }
  CompletionTail tail;
  if (use_flags) {
    const CudaSlot& first = region->slots_[0];
    region->tail_event_ = tail_event || !flags->waitable();
    ACCORD_ASSIGN_OR_RETURN(tail, flags->append_tail(graph, sinks, first.flag,
                                                         region->tail_event_ ? first.done.get() : nullptr,
                                                         tail_off_the_sms, "a region on " + device));
    region->tail_writer_ = tail.writer;
    region->has_tail_ = true;
  }
  for (std::uint32_t s = 0; s < request.slots; ++s) {
    const std::string what = "slot " + std::to_string(s) + " of a region of " + std::to_string(ops.size()) +
                             " operations on " + device;
    CudaSlot& slot = region->slots_[s];
    CUgraphExec exec = nullptr;
    ACCORD_CU_RETURN_IF_ERROR(syms, cuGraphInstantiateWithFlags(&exec, graph, 0), "instantiating " + what);
    slot.exec = UniqueCuGraphExec(syms, context.context, exec);
    if (region->has_tail_ && s > 0)
      ACCORD_RETURN_IF_ERROR(flags->retarget_tail(exec, tail, slot.flag, slot.done.get(), what));
  }
  return region;
}

}  // namespace accord::devices::cuda
