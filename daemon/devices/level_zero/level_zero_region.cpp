// Recording NPU regions. The graph extension captures bound buffers when an execute is
// appended, so binding and appending happen together under the program's binding
// mutex, and each slot's list is recorded with its own bindings once, at prepare time.
#include "daemon/devices/level_zero/level_zero_region.h"

#include "daemon/devices/level_zero/level_zero_program.h"
#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {
namespace {

std::string op_label(std::size_t i, const Operation& op) {
  return "operation " + std::to_string(i) + " (graph node " + std::to_string(op.node) + ")";
}

void* binding_pointer(const OperationBinding& b) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(b.address + b.offset));
}

Status record_program(const LevelZeroRuntime& runtime, ze_command_list_handle_t list, const NpuProgram& program,
                      const NpuHandle& npu, std::size_t index, const Operation& op) {
  const std::string what = op_label(index, op) + ", NPU program '" + program.name() + "'";
  if (&program.npu() != &npu) return invalid_error(what + ": the program was loaded on another NPU");
  const auto arguments = program.arguments();
  if (op.bindings.size() != arguments.size())
    return invalid_error(what + ": " + std::to_string(op.bindings.size()) + " bindings for " +
                         std::to_string(arguments.size()) + " arguments");
  for (std::size_t j = 0; j < arguments.size(); ++j) {
    if (op.bindings[j].address == 0) return invalid_error(what + " binding " + std::to_string(j) + " has no address");
    if (op.bindings[j].length < arguments[j].bytes)
      return invalid_error(what + " binding " + std::to_string(j) + " ('" + arguments[j].name + "') is " +
                           std::to_string(op.bindings[j].length) + " bytes; the argument needs " +
                           std::to_string(arguments[j].bytes));
  }
  const ze_graph_dditable_ext_t& table = program.table();
  std::lock_guard lock(program.binding_mutex());
  for (std::size_t j = 0; j < arguments.size(); ++j)
    ACCORD_ZE_RETURN_IF_ERROR("pfnGraphSetArgumentValue",
                              table.pfnSetArgumentValue(program.graph(), static_cast<std::uint32_t>(j),
                                                        binding_pointer(op.bindings[j])),
                              what + " binding " + std::to_string(j));
  ACCORD_ZE_RETURN_IF_ERROR("pfnAppendGraphExecute",
                            table.pfnAppendGraphExecute(runtime.translate(ZEL_HANDLE_COMMAND_LIST, list),
                                                        program.graph(), nullptr, nullptr, 0, nullptr),
                            what);
  return Status();
}

Status record_operation(const LevelZeroRuntime& runtime, ze_command_list_handle_t list, const NpuHandle& npu,
                        std::size_t index, const Operation& op) {
  const ZeSymbols& ze = runtime.ze();
  const std::string what = op_label(index, op);
  if (op.lane != LaneKind::Npu)
    return invalid_error(what + ": an NPU device has only the npu lane, not " + std::string(to_string(op.lane)));
  switch (op.kind) {
    case OpKind::Kernel: {
      const auto* program = dynamic_cast<const NpuProgram*>(op.code);
      if (program == nullptr) return invalid_error(what + ": its code is not an NPU program of this backend");
      return record_program(runtime, list, *program, npu, index, op);
    }
    case OpKind::Fill: {
      if (op.bindings.size() != 1) return invalid_error(what + ": a fill takes one binding");
      const std::uint8_t value = op.fill_value;
      ACCORD_ZE_RETURN_IF_ERROR("zeCommandListAppendMemoryFill",
                                ze.zeCommandListAppendMemoryFill(list, binding_pointer(op.bindings[0]), &value, 1,
                                                                 op.bindings[0].length, nullptr, 0, nullptr),
                                what);
      return Status();
    }
    case OpKind::Copy: {
      if (op.bindings.size() != 2) return invalid_error(what + ": a copy takes two bindings");
      ACCORD_ZE_RETURN_IF_ERROR(
          "zeCommandListAppendMemoryCopy",
          ze.zeCommandListAppendMemoryCopy(list, binding_pointer(op.bindings[0]), binding_pointer(op.bindings[1]),
                                           std::min(op.bindings[0].length, op.bindings[1].length), nullptr, 0,
                                           nullptr),
          what);
      return Status();
    }
  }
  return invalid_error(what + ": unknown operation kind");
}

}  // namespace

NpuRegion::~NpuRegion() {
  // How long a region being released may still be running before it is called hung.
  constexpr std::uint64_t kReleaseWaitNs = 1'000'000'000;
  for (Slot& slot : slots_) {
    if (!slot.launched || !slot.fence) continue;
    // A waiter reported this slot, but the completion thread may still be returning from
    // its own wait on the same fence, and still counts itself in `pending`: neither the
    // fence nor `pending` may go before it leaves.
    NpuCompletion::await_unwatched(slot.pending);
    if (runtime_->ze().zeFenceHostSynchronize(slot.fence.get(), kReleaseWaitNs) != ZE_RESULT_SUCCESS)
      graveyard_->bury(std::move(slot.list), std::move(slot.fence));
  }
}

Result<std::unique_ptr<NpuRegion>> NpuRegion::record(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                     const NpuHandle& npu, ze_command_queue_handle_t queue,
                                                     std::shared_ptr<NpuGraveyard> graveyard, const void* owner,
                                                     const RegionRequest& request) {
  if (request.slots == 0) return invalid_error("an NPU region needs at least one submission slot");
  const ZeSymbols& ze = runtime->ze();
  const NpuDriver& driver = runtime->drivers()[npu.driver];
  std::unique_ptr<NpuRegion> region(new NpuRegion());
  region->runtime_ = runtime;
  region->graveyard_ = std::move(graveyard);
  region->owner_ = owner;
  region->slots_ = std::vector<Slot>(request.slots);
  for (std::uint32_t s = 0; s < request.slots; ++s) {
    Slot& slot = region->slots_[s];
    ze_command_list_desc_t list_desc{};
    list_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
    ze_command_list_handle_t list = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeCommandListCreate",
                              ze.zeCommandListCreate(driver.context.get(), npu.device, &list_desc, &list),
                              "NPU region slot " + std::to_string(s));
    slot.list = UniqueZeCommandList(list, ze.zeCommandListDestroy);
    for (std::size_t i = 0; i < request.operations.size(); ++i) {
      // Operations of one region run one after another: the engine's edges never ask
      // for more parallelism than one NPU queue has.
      if (i > 0)
        ACCORD_ZE_RETURN_IF_ERROR("zeCommandListAppendBarrier", ze.zeCommandListAppendBarrier(list, nullptr, 0, nullptr),
                                  "NPU region slot " + std::to_string(s));
      ACCORD_RETURN_IF_ERROR(record_operation(*runtime, list, npu, i, request.operations[i]));
    }
    ACCORD_ZE_RETURN_IF_ERROR("zeCommandListClose", ze.zeCommandListClose(list), "NPU region slot " + std::to_string(s));
    ze_fence_desc_t fence_desc{};
    fence_desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
    ze_fence_handle_t fence = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeFenceCreate", ze.zeFenceCreate(queue, &fence_desc, &fence),
                              "NPU region slot " + std::to_string(s));
    slot.fence = UniqueZeFence(fence, ze.zeFenceDestroy);
    slot.pending.fence = fence;
  }
  return region;
}

}  // namespace accord::devices::level_zero
