#include "daemon/devices/host/host_code.h"

#include <string>
#include <utility>

#include "daemon/devices/host/host_plugin.h"

namespace accord::devices::host {
namespace {

std::string binding_label(std::size_t index, const BindingContract& binding) {
  std::string label = "binding " + std::to_string(index);
  if (!binding.layout.empty()) label += " ('" + binding.layout + "')";
  return label;
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// A declared alignment of 0 means "no requirement", the same as 1.
std::size_t declared_alignment(const accord_plugin_binding_info_v1_t& info) {
  return info.alignment == 0 ? 1 : info.alignment;
}

}  // namespace

HostCode::HostCode(const accord_plugin_kernel_v1_t& kernel, KernelContract contract,
                   std::shared_ptr<const HostPluginLibrary> library)
    : name_(kernel.name), contract_(std::move(contract)), kernel_(&kernel), library_(std::move(library)) {}

HostCode::~HostCode() = default;

std::optional<Access> from_plugin_access(std::uint32_t value) noexcept {
  switch (value) {
    case ACCORD_PLUGIN_ACCESS_READ: return Access::Read;
    case ACCORD_PLUGIN_ACCESS_WRITE: return Access::Write;
    case ACCORD_PLUGIN_ACCESS_READ_WRITE: return Access::ReadWrite;
    default: return std::nullopt;
  }
}

Status check_kernel_description(const accord_plugin_kernel_v1_t& kernel) {
  if (kernel.name == nullptr || kernel.name[0] == '\0') return unsupported_error("a kernel has no name");
  const std::string what = "kernel '" + std::string(kernel.name) + "'";
  if (kernel.run == nullptr) return unsupported_error(what + " has no run function");
  if (kernel.binding_count > 0 && kernel.bindings == nullptr)
    return unsupported_error(what + " declares " + std::to_string(kernel.binding_count) +
                             " bindings but no binding descriptions");
  for (std::uint32_t i = 0; i < kernel.binding_count; ++i) {
    if (!from_plugin_access(kernel.bindings[i].access))
      return unsupported_error(what + " binding " + std::to_string(i) + " declares unknown access " +
                               std::to_string(kernel.bindings[i].access));
    if (!is_power_of_two(declared_alignment(kernel.bindings[i])))
      return unsupported_error(what + " binding " + std::to_string(i) + " declares alignment " +
                               std::to_string(kernel.bindings[i].alignment) + ", not a power of two");
  }
  return Status();
}

Status check_kernel_contract(const accord_plugin_kernel_v1_t& kernel, const KernelContract& contract) {
  const std::string what = "kernel '" + std::string(kernel.name) + "'";
  if (Status status = contract.validate(); !status.ok()) return std::move(status).annotate(what);
  if (contract.bindings.size() != kernel.binding_count)
    return invalid_error(what + " takes " + std::to_string(kernel.binding_count) + " bindings; the contract declares " +
                         std::to_string(contract.bindings.size()));
  for (std::size_t i = 0; i < contract.bindings.size(); ++i) {
    const BindingContract& binding = contract.bindings[i];
    const accord_plugin_binding_info_v1_t& info = kernel.bindings[i];
    // A known value: check_kernel_description() ran when the kernel was found.
    const Access declared = from_plugin_access(info.access).value_or(Access::ReadWrite);
    if (binding.access != declared)
      return invalid_error(what + " " + binding_label(i, binding) + ": the kernel declares access " +
                           std::string(to_string(declared)) + "; the contract declares " +
                           std::string(to_string(binding.access)));
    if (binding.alignment % declared_alignment(info) != 0)
      return invalid_error(what + " " + binding_label(i, binding) + ": the contract's alignment " +
                           std::to_string(binding.alignment) + " is not a multiple of the " +
                           std::to_string(declared_alignment(info)) + " bytes the kernel needs");
  }
  if (contract.constants.size() != kernel.constant_bytes)
    return invalid_error(what + " takes " + std::to_string(kernel.constant_bytes) +
                         " bytes of constants; the contract has " + std::to_string(contract.constants.size()));
  return Status();
}

}  // namespace accord::devices::host
