// HostCode: a kernel the host device loaded, built-in or from a plugin, described by
// the plugin ABI's kernel struct so both run through one code path (host_region.cpp).
// Also the load-time check of a contract against what a kernel declares
// (ARCHITECTURE.md engine item 11: kernel metadata must match its contract at load).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "accord/plugin_abi.h"
#include "daemon/devices/device.h"

namespace accord::devices::host {

class HostPluginLibrary;

class HostCode final : public LoadedCode {
 public:
  // `kernel` is borrowed and must stay valid while *this lives: built-ins point into a
  // static table; plugin kernels point into the library that `library` keeps loaded
  // (null for built-ins). `contract` must already have passed check_kernel_contract().
  HostCode(const accord_plugin_kernel_v1_t& kernel, KernelContract contract,
           std::shared_ptr<const HostPluginLibrary> library);
  ~HostCode() override;

  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }
  // The kernel's ABI description, including its run function. Borrowed from *this.
  const accord_plugin_kernel_v1_t& kernel() const noexcept { return *kernel_; }

 private:
  std::string name_;
  KernelContract contract_;
  const accord_plugin_kernel_v1_t* kernel_;
  // Declared last so it is destroyed last: the library outlives every pointer into it.
  std::shared_ptr<const HostPluginLibrary> library_;
};

// Checks `contract` against what `kernel` declares: contract.validate(), equal binding
// count, each binding's access equal to the declared one, each binding's alignment a
// multiple of the declared one, and a constant block of exactly `constant_bytes`.
// Returns Invalid naming the kernel and the binding at fault. Thread-safe.
Status check_kernel_contract(const accord_plugin_kernel_v1_t& kernel, const KernelContract& contract);

// Checks that `kernel`'s own description is usable: a name, a run function, binding
// infos for every binding with a known access and a power-of-two alignment (0 reads
// as 1). Built-ins pass by construction; a plugin that fails is Unsupported.
Status check_kernel_description(const accord_plugin_kernel_v1_t& kernel);

// The Access an accord_plugin_access_t value names; nullopt for unknown values.
std::optional<Access> from_plugin_access(std::uint32_t value) noexcept;

}  // namespace accord::devices::host
