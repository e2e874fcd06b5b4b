// The kernels built into the host device, by name and contract. Each function returns
// the kernel's name and a ready-made KernelContract for one size, so a client loads a
// built-in without spelling out bindings and constant bytes by hand:
//
//   accord::builtin::KernelSpec spec = accord::builtin::add_f32(1024);
//   // load spec.name with spec.contract, then bind a, b, out in that order
//
// Buffers hold f32 values in host byte order; every binding needs 4-byte alignment.
// The host device checks the contract against the kernel at load, so a spec edited by
// hand is still checked. Header-only; the functions allocate (strings, vectors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "accord/access.h"
#include "accord/contract.h"

namespace accord::builtin {

// A kernel name with the contract of one specialization of it.
struct KernelSpec {
  std::string name;
  KernelContract contract;
};

// The kernel names, as CodeImage::name or the client's load call takes them.
inline constexpr std::string_view kAddF32 = "accord.add_f32";
inline constexpr std::string_view kSaxpyF32 = "accord.saxpy_f32";
inline constexpr std::string_view kMatmulF32 = "accord.matmul_f32";
inline constexpr std::string_view kReluF32 = "accord.relu_f32";

// Offset alignment every built-in needs on every binding.
inline constexpr std::size_t kBuiltinAlignment = 4;

namespace detail {

// Bytes of `rows` x `cols` f32 values; saturates at SIZE_MAX so an impossible size
// fails the contract's validate() (bytes must be <= PTRDIFF_MAX) instead of wrapping.
inline std::size_t f32_bytes(std::uint64_t rows, std::uint64_t cols = 1) noexcept {
  std::size_t elements = 0;
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(rows, cols, &elements) ||
      __builtin_mul_overflow(elements, sizeof(float), &bytes))
    return std::numeric_limits<std::size_t>::max();
  return bytes;
}

inline BindingContract f32_binding(std::size_t bytes, Access access, std::string layout) {
  return BindingContract{bytes, kBuiltinAlignment, access, std::move(layout)};
}

inline std::string vector_layout(std::uint32_t count) { return "f32[" + std::to_string(count) + "]"; }

inline std::string matrix_layout(std::uint32_t rows, std::uint32_t cols) {
  return "f32[" + std::to_string(rows) + "x" + std::to_string(cols) + "]";
}

}  // namespace detail

// accord.add_f32: out[i] = a[i] + b[i] for i < `count`.
// Bindings: a (Read), b (Read), out (Write), each f32[count].
// Constants: uint32 count.
// `count` must be >= 1: a zero count gives zero-byte bindings, which load refuses.
inline KernelSpec add_f32(std::uint32_t count) {
  KernelSpec spec{std::string(kAddF32), {}};
  const std::size_t bytes = detail::f32_bytes(count);
  spec.contract.bindings = {
      detail::f32_binding(bytes, Access::Read, "a " + detail::vector_layout(count)),
      detail::f32_binding(bytes, Access::Read, "b " + detail::vector_layout(count)),
      detail::f32_binding(bytes, Access::Write, "out " + detail::vector_layout(count)),
  };
  append_constant(spec.contract.constants, count);
  return spec;
}

// accord.saxpy_f32: y[i] = `a` * x[i] + y[i] for i < `count`.
// Bindings: x (Read), y (ReadWrite), each f32[count].
// Constants: uint32 count, then f32 a (8 bytes).
// `count` must be >= 1.
inline KernelSpec saxpy_f32(std::uint32_t count, float a) {
  KernelSpec spec{std::string(kSaxpyF32), {}};
  const std::size_t bytes = detail::f32_bytes(count);
  spec.contract.bindings = {
      detail::f32_binding(bytes, Access::Read, "x " + detail::vector_layout(count)),
      detail::f32_binding(bytes, Access::ReadWrite, "y " + detail::vector_layout(count)),
  };
  append_constant(spec.contract.constants, count);
  append_constant(spec.contract.constants, a);
  return spec;
}

// accord.matmul_f32: C = A x B, all row-major: A is `m` x `k`, B is `k` x `n`, C is
// `m` x `n`. C is overwritten, not accumulated into.
// Bindings: A (Read), B (Read), C (Write).
// Constants: uint32 M, uint32 K, uint32 N (12 bytes).
// Every dimension must be >= 1.
inline KernelSpec matmul_f32(std::uint32_t m, std::uint32_t k, std::uint32_t n) {
  KernelSpec spec{std::string(kMatmulF32), {}};
  spec.contract.bindings = {
      detail::f32_binding(detail::f32_bytes(m, k), Access::Read, "A " + detail::matrix_layout(m, k)),
      detail::f32_binding(detail::f32_bytes(k, n), Access::Read, "B " + detail::matrix_layout(k, n)),
      detail::f32_binding(detail::f32_bytes(m, n), Access::Write, "C " + detail::matrix_layout(m, n)),
  };
  append_constant(spec.contract.constants, m);
  append_constant(spec.contract.constants, k);
  append_constant(spec.contract.constants, n);
  return spec;
}

// accord.relu_f32: out[i] = max(in[i], 0) for i < `count` (NaN becomes 0).
// Bindings: in (Read), out (Write), each f32[count].
// Constants: uint32 count.
// `count` must be >= 1.
inline KernelSpec relu_f32(std::uint32_t count) {
  KernelSpec spec{std::string(kReluF32), {}};
  const std::size_t bytes = detail::f32_bytes(count);
  spec.contract.bindings = {
      detail::f32_binding(bytes, Access::Read, "in " + detail::vector_layout(count)),
      detail::f32_binding(bytes, Access::Write, "out " + detail::vector_layout(count)),
  };
  append_constant(spec.contract.constants, count);
  return spec;
}

}  // namespace accord::builtin
