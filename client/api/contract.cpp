#include "accord/contract.h"

#include <string>

namespace accord {
namespace {

bool is_power_of_two(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string binding_name(std::size_t index, const BindingContract& binding) {
  std::string name = "binding " + std::to_string(index);
  if (!binding.layout.empty()) name += " ('" + binding.layout + "')";
  return name;
}

}  // namespace

Status KernelContract::validate() const {
  constexpr std::size_t kMaxExtent = static_cast<std::size_t>(PTRDIFF_MAX);
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const BindingContract& b = bindings[i];
    if (b.bytes == 0 || b.bytes > kMaxExtent)
      return invalid_error("contract " + binding_name(i, b) + ": bytes must be in 1..PTRDIFF_MAX, got " +
                           std::to_string(b.bytes));
    if (!is_power_of_two(b.alignment))
      return invalid_error("contract " + binding_name(i, b) + ": alignment must be a power of two, got " +
                           std::to_string(b.alignment));
  }
  return Status();
}

Status check_bindings(const KernelContract& contract, std::span<const BoundExtent> views,
                      bool allow_aliasing) {
  ACCORD_RETURN_IF_ERROR(contract.validate());
  if (views.size() != contract.bindings.size())
    return invalid_error("kernel expects " + std::to_string(contract.bindings.size()) +
                         " bindings, got " + std::to_string(views.size()));
  for (std::size_t i = 0; i < views.size(); ++i) {
    const BindingContract& b = contract.bindings[i];
    if (views[i].length < b.bytes)
      return invalid_error(binding_name(i, b) + ": view of " + std::to_string(views[i].length) +
                           " bytes is shorter than the contract's minimum extent of " +
                           std::to_string(b.bytes) + " bytes");
    if (views[i].offset % b.alignment != 0)
      return invalid_error(binding_name(i, b) + ": view offset " + std::to_string(views[i].offset) +
                           " is not aligned to the contract's " + std::to_string(b.alignment) + " bytes");
  }
  if (allow_aliasing) return Status();
  // Quadratic, but over one kernel's bindings (a handful), at record time only.
  for (std::size_t i = 0; i < views.size(); ++i) {
    for (std::size_t j = i + 1; j < views.size(); ++j) {
      if (views[i].allocation != views[j].allocation) continue;
      if (!writes(contract.bindings[i].access) && !writes(contract.bindings[j].access)) continue;
      const bool overlap = views[i].offset < views[j].offset + views[j].length &&
                           views[j].offset < views[i].offset + views[i].length;
      if (overlap)
        return invalid_error(binding_name(i, contract.bindings[i]) + " and " +
                             binding_name(j, contract.bindings[j]) +
                             " overlap in one allocation and one of them writes; overlapping "
                             "writable kernel arguments need an explicit aliasing dispatch");
    }
  }
  return Status();
}

}  // namespace accord
