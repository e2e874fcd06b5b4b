#include "daemon/devices/host/host_region.h"

#include <cstring>
#include <string>

namespace accord::devices::host {
namespace {

// Room for a kernel's failure reason; on the stack, so a failing launch allocates only
// when it builds the Status.
constexpr std::size_t kMessageCapacity = 256;

const char* kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Fill: return "fill";
    case OpKind::Copy: return "copy";
    case OpKind::Kernel: return "kernel";
  }
  return "unknown kind";
}

std::string op_label(std::size_t index, const Operation& op) {
  std::string label = "op " + std::to_string(index) + " (" + kind_name(op.kind);
  if (op.kind == OpKind::Kernel && op.code != nullptr) label += " '" + op.code->name() + "'";
  return label + ")";
}

bool host_lane(LaneKind lane) {
  return lane == LaneKind::Upload || lane == LaneKind::Compute || lane == LaneKind::Download || lane == LaneKind::Host;
}

// Resolves one binding to a host address, checking it lies within its memory.
// Messages are built only on failure: lowering runs once per region at prepare, and
// success-path strings were a measurable share of prepare's cost.
Result<std::byte*> resolve(const OperationBinding& binding, std::size_t index) {
  const auto what = [index] { return "binding " + std::to_string(index); };
  if (binding.memory == nullptr) return invalid_error(what() + " has no memory");
  std::byte* base = binding.memory->host_address();
  if (base == nullptr) return invalid_error(what() + " is not host mapped");
  const std::size_t size = binding.memory->bytes();
  if (binding.offset > size || binding.length > size - binding.offset)
    return invalid_error(what() + ": bytes [" + std::to_string(binding.offset) + ", +" +
                         std::to_string(binding.length) + ") lie outside its memory of " + std::to_string(size) +
                         " bytes");
  return base + binding.offset;
}

Status check_writes(const OperationBinding& binding, std::size_t index) {
  if (writes(binding.access)) return Status();
  return invalid_error("binding " + std::to_string(index) + " is written but declared " +
                       std::string(to_string(binding.access)));
}

bool covers(Access declared, Access needed) {
  return (!reads(needed) || reads(declared)) && (!writes(needed) || writes(declared));
}

Status check_kernel_binding(const BindingContract& contract, const OperationBinding& binding, std::size_t index) {
  const auto what = [index] { return "binding " + std::to_string(index); };
  if (binding.length < contract.bytes)
    return invalid_error(what() + ": view of " + std::to_string(binding.length) + " bytes is shorter than the " +
                         std::to_string(contract.bytes) + " bytes of the kernel's contract");
  if (binding.offset % contract.alignment != 0)
    return invalid_error(what() + ": offset " + std::to_string(binding.offset) + " is not aligned to " +
                         std::to_string(contract.alignment) + " bytes");
  // The engine orders work by the binding's access; one narrower than the kernel's
  // would let another operation race with it.
  if (!covers(binding.access, contract.access))
    return invalid_error(what() + ": declared " + std::string(to_string(binding.access)) + " but the kernel's contract " +
                         std::string(to_string(contract.access)));
  return Status();
}

}  // namespace

Result<std::unique_ptr<HostRegion>> HostRegion::lower(std::span<const Operation> run) {
  std::unique_ptr<HostRegion> region(new HostRegion());
  region->tasks_.reserve(run.size());
  std::size_t kernel_bindings = 0;
  for (const Operation& op : run)
    if (op.kind == OpKind::Kernel) kernel_bindings += op.bindings.size();
  region->buffers_.reserve(kernel_bindings);
  for (std::size_t i = 0; i < run.size(); ++i) {
    const Operation& op = run[i];
    auto fail = [&](Status status) { return std::move(status).annotate(op_label(i, op)); };
    if (!host_lane(op.lane))
      return fail(invalid_error("lane '" + std::string(to_string(op.lane)) + "' is not a host device lane"));
    if (op.lane != run.front().lane)
      return fail(invalid_error("lane '" + std::string(to_string(op.lane)) + "' differs from the run's lane '" +
                                std::string(to_string(run.front().lane)) + "'"));
    Task task;
    task.kind = op.kind;
    switch (op.kind) {
      case OpKind::Fill: {
        if (op.bindings.size() != 1)
          return fail(invalid_error("a fill takes 1 binding, got " + std::to_string(op.bindings.size())));
        if (Status status = check_writes(op.bindings[0], 0); !status.ok()) return fail(std::move(status));
        Result<std::byte*> dst = resolve(op.bindings[0], 0);
        if (!dst.ok()) return fail(std::move(dst).status());
        task.dst = *dst;
        task.bytes = op.bindings[0].length;
        task.fill_value = op.fill_value;
        break;
      }
      case OpKind::Copy: {
        if (op.bindings.size() != 2)
          return fail(invalid_error("a copy takes 2 bindings (destination, source), got " +
                                    std::to_string(op.bindings.size())));
        const OperationBinding& dst = op.bindings[0];
        const OperationBinding& src = op.bindings[1];
        if (Status status = check_writes(dst, 0); !status.ok()) return fail(std::move(status));
        if (!reads(src.access))
          return fail(invalid_error("binding 1 is read but declared " + std::string(to_string(src.access))));
        if (dst.length != src.length)
          return fail(invalid_error("destination of " + std::to_string(dst.length) + " bytes and source of " +
                                    std::to_string(src.length) + " bytes differ in length"));
        Result<std::byte*> dst_address = resolve(dst, 0);
        if (!dst_address.ok()) return fail(std::move(dst_address).status());
        Result<std::byte*> src_address = resolve(src, 1);
        if (!src_address.ok()) return fail(std::move(src_address).status());
        if (dst.memory == src.memory && dst.offset < src.offset + src.length && src.offset < dst.offset + dst.length)
          return fail(invalid_error("destination and source overlap"));
        task.dst = *dst_address;
        task.src = *src_address;
        task.bytes = dst.length;
        break;
      }
      case OpKind::Kernel: {
        const auto* code = dynamic_cast<const HostCode*>(op.code);
        if (code == nullptr)
          return fail(invalid_error(op.code == nullptr ? "a kernel operation has no code"
                                                       : "the code was not loaded by the host device"));
        const KernelContract& contract = code->contract();
        if (op.bindings.size() != contract.bindings.size())
          return fail(invalid_error("the kernel takes " + std::to_string(contract.bindings.size()) +
                                    " bindings, got " + std::to_string(op.bindings.size())));
        task.code = code;
        task.first_buffer = static_cast<std::uint32_t>(region->buffers_.size());
        task.buffer_count = static_cast<std::uint32_t>(op.bindings.size());
        for (std::size_t b = 0; b < op.bindings.size(); ++b) {
          if (Status status = check_kernel_binding(contract.bindings[b], op.bindings[b], b); !status.ok())
            return fail(std::move(status));
          Result<std::byte*> address = resolve(op.bindings[b], b);
          if (!address.ok()) return fail(std::move(address).status());
          region->buffers_.push_back(accord_plugin_buffer_v1_t{*address, op.bindings[b].length});
        }
        break;
      }
      default:
        return fail(invalid_error("unknown operation kind " + std::to_string(static_cast<int>(op.kind))));
    }
    region->tasks_.push_back(task);
  }
  return region;
}

void HostRegion::run(CompletionSink& sink) noexcept {
  for (const Task& task : tasks_) {
    switch (task.kind) {
      case OpKind::Fill:
        std::memset(task.dst, task.fill_value, task.bytes);
        break;
      case OpKind::Copy:
        std::memcpy(task.dst, task.src, task.bytes);
        break;
      case OpKind::Kernel: {
        const accord_plugin_kernel_v1_t& kernel = task.code->kernel();
        const std::vector<std::byte>& constants = task.code->contract().constants;
        char message[kMessageCapacity] = {};
        std::int32_t result = ACCORD_PLUGIN_FAILED;
        bool threw = false;
        // The run function is C, but a plugin written in C++ can still let an exception
        // escape it; it must not unwind through this noexcept function.
        try {
          result = kernel.run(buffers_.data() + task.first_buffer, task.buffer_count, constants.data(),
                              constants.size(), message, sizeof(message));
        } catch (...) {
          threw = true;
        }
        if (threw) {
          sink.on_error(execution_error("host kernel '" + task.code->name() + "' threw a C++ exception"));
          return;  // may destroy *this: no member access below
        }
        if (result != ACCORD_PLUGIN_OK) {
          message[sizeof(message) - 1] = '\0';  // the kernel may not have terminated it
          sink.on_error(execution_error("host kernel '" + task.code->name() +
                                        "' failed: " + (message[0] != '\0' ? message : "no reason given")));
          return;  // may destroy *this: no member access below
        }
        break;
      }
    }
  }
  sink.on_done();  // may destroy *this: no member access below
}

}  // namespace accord::devices::host
