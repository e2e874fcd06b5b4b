// The kernels built into the host device (accord.add_f32, saxpy_f32, matmul_f32,
// relu_f32), described with the plugin ABI's structs so built-ins and plugins run
// through one code path. Their names and client-side contracts are in the public
// header accord/builtin_kernels.h; the math and the checks are here.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "accord/plugin_abi.h"
#include "daemon/devices/host/host_code.h"

namespace accord::devices::host {

// Checks what only a kernel's semantics know, beyond check_kernel_contract(): that each
// binding's extent covers what the constants say the kernel touches. Returns Invalid
// naming the kernel and the binding at fault.
using BuiltinContractCheck = Status (*)(const KernelContract& contract);

struct BuiltinKernel {
  accord_plugin_kernel_v1_t abi;
  BuiltinContractCheck check_contract;
};

// Every built-in, in a static table. Thread-safe.
std::span<const BuiltinKernel> builtin_kernels() noexcept;

// The built-in named `name`, or nullptr. Thread-safe.
const BuiltinKernel* find_builtin_kernel(std::string_view name) noexcept;

// Loads the built-in `name` with `contract`: check_kernel_contract() plus the kernel's
// own check. Returns Unsupported (listing the built-ins) for an unknown name, since
// another device may offer it; Invalid for a contract that does not match. Thread-safe.
Result<std::unique_ptr<HostCode>> load_builtin_kernel(std::string_view name, const KernelContract& contract);

}  // namespace accord::devices::host
