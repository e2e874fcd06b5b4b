#include "daemon/devices/host/host_kernels.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "accord/builtin_kernels.h"

namespace accord::devices::host {
namespace {

// --- constant blocks: read with memcpy, since contract.constants has byte alignment ---

template <class T>
T constant_at(const void* constants, std::size_t offset) noexcept {
  T value;
  std::memcpy(&value, static_cast<const std::byte*>(constants) + offset, sizeof(T));
  return value;
}

// Bytes of `a` * `b` f32 values, or UINT64_MAX when that overflows (never covered).
std::uint64_t f32_extent(std::uint64_t a, std::uint64_t b = 1) noexcept {
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(a, b, &elements) || __builtin_mul_overflow(elements, 4u, &bytes)) return UINT64_MAX;
  return bytes;
}

// The run functions re-check their extents, although load and lowering already did:
// they are the last line before raw pointer arithmetic, and the check is a compare.
bool too_short(const accord_plugin_buffer_v1_t& buffer, std::uint64_t needed, const char* kernel,
               std::uint32_t index, char* message, std::size_t capacity) noexcept {
  if (buffer.bytes >= needed) return false;
  if (capacity > 0)
    std::snprintf(message, capacity, "%s: binding %u holds %zu bytes, needs %llu", kernel, index, buffer.bytes,
                  static_cast<unsigned long long>(needed));
  return true;
}

// --- run functions (C ABI shape; never throw) ---

std::int32_t run_add_f32(const accord_plugin_buffer_v1_t* buffers, std::uint32_t, const void* constants,
                         std::size_t, char* message, std::size_t capacity) noexcept {
  const auto count = constant_at<std::uint32_t>(constants, 0);
  for (std::uint32_t i = 0; i < 3; ++i)
    if (too_short(buffers[i], f32_extent(count), "accord.add_f32", i, message, capacity)) return ACCORD_PLUGIN_FAILED;
  const auto* a = static_cast<const float*>(buffers[0].data);
  const auto* b = static_cast<const float*>(buffers[1].data);
  auto* out = static_cast<float*>(buffers[2].data);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
  return ACCORD_PLUGIN_OK;
}

std::int32_t run_saxpy_f32(const accord_plugin_buffer_v1_t* buffers, std::uint32_t, const void* constants,
                           std::size_t, char* message, std::size_t capacity) noexcept {
  const auto count = constant_at<std::uint32_t>(constants, 0);
  const auto a = constant_at<float>(constants, 4);
  for (std::uint32_t i = 0; i < 2; ++i)
    if (too_short(buffers[i], f32_extent(count), "accord.saxpy_f32", i, message, capacity))
      return ACCORD_PLUGIN_FAILED;
  const auto* x = static_cast<const float*>(buffers[0].data);
  auto* y = static_cast<float*>(buffers[1].data);
  for (std::uint32_t i = 0; i < count; ++i) y[i] = a * x[i] + y[i];
  return ACCORD_PLUGIN_OK;
}

std::int32_t run_matmul_f32(const accord_plugin_buffer_v1_t* buffers, std::uint32_t, const void* constants,
                            std::size_t, char* message, std::size_t capacity) noexcept {
  const auto m = constant_at<std::uint32_t>(constants, 0);
  const auto k = constant_at<std::uint32_t>(constants, 4);
  const auto n = constant_at<std::uint32_t>(constants, 8);
  if (too_short(buffers[0], f32_extent(m, k), "accord.matmul_f32", 0, message, capacity) ||
      too_short(buffers[1], f32_extent(k, n), "accord.matmul_f32", 1, message, capacity) ||
      too_short(buffers[2], f32_extent(m, n), "accord.matmul_f32", 2, message, capacity))
    return ACCORD_PLUGIN_FAILED;
  const auto* a = static_cast<const float*>(buffers[0].data);
  const auto* b = static_cast<const float*>(buffers[1].data);
  auto* c = static_cast<float*>(buffers[2].data);
  // i-p-j order walks B and C row by row, which keeps the inner loop contiguous.
  for (std::size_t i = 0; i < m; ++i) {
    float* c_row = c + i * n;
    for (std::size_t j = 0; j < n; ++j) c_row[j] = 0.0f;
    for (std::size_t p = 0; p < k; ++p) {
      const float a_ip = a[i * k + p];
      const float* b_row = b + p * n;
      for (std::size_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
  return ACCORD_PLUGIN_OK;
}

std::int32_t run_relu_f32(const accord_plugin_buffer_v1_t* buffers, std::uint32_t, const void* constants,
                          std::size_t, char* message, std::size_t capacity) noexcept {
  const auto count = constant_at<std::uint32_t>(constants, 0);
  for (std::uint32_t i = 0; i < 2; ++i)
    if (too_short(buffers[i], f32_extent(count), "accord.relu_f32", i, message, capacity)) return ACCORD_PLUGIN_FAILED;
  const auto* in = static_cast<const float*>(buffers[0].data);
  auto* out = static_cast<float*>(buffers[1].data);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  return ACCORD_PLUGIN_OK;
}

// --- contract checks (constants already have the declared size) ---

Status require_extent(const KernelContract& contract, std::string_view kernel, std::size_t index,
                      std::uint64_t needed, const char* why) {
  const BindingContract& binding = contract.bindings[index];
  if (binding.bytes >= needed) return Status();
  std::string label = "binding " + std::to_string(index);
  if (!binding.layout.empty()) label += " ('" + binding.layout + "')";
  return invalid_error("kernel '" + std::string(kernel) + "' " + label + ": the contract's " +
                       std::to_string(binding.bytes) + " bytes are fewer than the " + std::to_string(needed) +
                       " bytes " + why);
}

Status check_add_f32(const KernelContract& contract) {
  const auto count = constant_at<std::uint32_t>(contract.constants.data(), 0);
  for (std::size_t i = 0; i < 3; ++i)
    ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kAddF32, i, f32_extent(count), "that count*4 needs"));
  return Status();
}

Status check_saxpy_f32(const KernelContract& contract) {
  const auto count = constant_at<std::uint32_t>(contract.constants.data(), 0);
  for (std::size_t i = 0; i < 2; ++i)
    ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kSaxpyF32, i, f32_extent(count), "that count*4 needs"));
  return Status();
}

Status check_matmul_f32(const KernelContract& contract) {
  const auto m = constant_at<std::uint32_t>(contract.constants.data(), 0);
  const auto k = constant_at<std::uint32_t>(contract.constants.data(), 4);
  const auto n = constant_at<std::uint32_t>(contract.constants.data(), 8);
  ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kMatmulF32, 0, f32_extent(m, k), "that M*K*4 needs"));
  ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kMatmulF32, 1, f32_extent(k, n), "that K*N*4 needs"));
  ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kMatmulF32, 2, f32_extent(m, n), "that M*N*4 needs"));
  return Status();
}

Status check_relu_f32(const KernelContract& contract) {
  const auto count = constant_at<std::uint32_t>(contract.constants.data(), 0);
  for (std::size_t i = 0; i < 2; ++i)
    ACCORD_RETURN_IF_ERROR(require_extent(contract, builtin::kReluF32, i, f32_extent(count), "that count*4 needs"));
  return Status();
}

// --- the table ---

constexpr std::uint32_t kAlign = builtin::kBuiltinAlignment;
constexpr accord_plugin_binding_info_v1_t kRead{ACCORD_PLUGIN_ACCESS_READ, kAlign};
constexpr accord_plugin_binding_info_v1_t kWrite{ACCORD_PLUGIN_ACCESS_WRITE, kAlign};
constexpr accord_plugin_binding_info_v1_t kReadWrite{ACCORD_PLUGIN_ACCESS_READ_WRITE, kAlign};

constexpr std::array kAddBindings{kRead, kRead, kWrite};
constexpr std::array kSaxpyBindings{kRead, kReadWrite};
constexpr std::array kMatmulBindings{kRead, kRead, kWrite};
constexpr std::array kReluBindings{kRead, kWrite};

// The names are the public header's string_views, which view string literals and so
// are NUL-terminated, as the ABI's const char* needs.
const std::array<BuiltinKernel, 4> kBuiltins{{
    {{builtin::kAddF32.data(), kAddBindings.size(), kAddBindings.data(), 4, &run_add_f32, {}}, &check_add_f32},
    {{builtin::kSaxpyF32.data(), kSaxpyBindings.size(), kSaxpyBindings.data(), 8, &run_saxpy_f32, {}},
     &check_saxpy_f32},
    {{builtin::kMatmulF32.data(), kMatmulBindings.size(), kMatmulBindings.data(), 12, &run_matmul_f32, {}},
     &check_matmul_f32},
    {{builtin::kReluF32.data(), kReluBindings.size(), kReluBindings.data(), 4, &run_relu_f32, {}}, &check_relu_f32},
}};

}  // namespace

std::span<const BuiltinKernel> builtin_kernels() noexcept { return kBuiltins; }

const BuiltinKernel* find_builtin_kernel(std::string_view name) noexcept {
  for (const BuiltinKernel& kernel : kBuiltins)
    if (name == kernel.abi.name) return &kernel;
  return nullptr;
}

Result<std::unique_ptr<HostCode>> load_builtin_kernel(std::string_view name, const KernelContract& contract) {
  const BuiltinKernel* kernel = find_builtin_kernel(name);
  if (kernel == nullptr) {
    std::string offered;
    for (const BuiltinKernel& k : kBuiltins) offered += (offered.empty() ? "" : ", ") + std::string(k.abi.name);
    return unsupported_error("the host device has no built-in kernel '" + std::string(name) +
                             "'; it offers: " + offered);
  }
  ACCORD_RETURN_IF_ERROR(check_kernel_contract(kernel->abi, contract));
  ACCORD_RETURN_IF_ERROR(kernel->check_contract(contract));
  return std::make_unique<HostCode>(kernel->abi, contract, nullptr);
}

}  // namespace accord::devices::host
