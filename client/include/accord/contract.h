// The trusted ABI of a fixed kernel specialization: what every buffer argument may
// touch and the exact scalar bytes. Checked structurally here and against views when
// a graph records the kernel; a contract describes the code, it does not prove it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "accord/access.h"
#include "accord/status.h"

namespace accord {

struct BindingContract {
  std::size_t bytes = 0;       // minimum accessible extent, over-reads included
  std::size_t alignment = 1;   // required alignment of the view's offset; power of two
  Access access = Access::Read;  // every access the kernel may make through it
  std::string layout;          // diagnostic label only ("f32[1024]")
};

struct KernelContract {
  std::vector<BindingContract> bindings;  // kernel ABI order
  std::vector<std::byte> constants;       // exact scalar argument bytes

  // Structural check: every binding has bytes >= 1 and a power-of-two alignment.
  // Returns Invalid naming the first bad binding.
  Status validate() const;
};

// One bound view as the contract checker sees it: which allocation (an identity that
// is only compared), where, and how long.
struct BoundExtent {
  std::uint64_t allocation = 0;
  std::size_t offset = 0;
  std::size_t length = 0;
};

// Record-time check of `views` against `contract` (ARCHITECTURE.md engine item 11):
// binding count, minimum extent, offset alignment and, unless `allow_aliasing`, no
// two overlapping views of one allocation where either binding writes.
// Returns Invalid whose message names the binding at fault.
Status check_bindings(const KernelContract& contract, std::span<const BoundExtent> views,
                      bool allow_aliasing = false);

// Appends `value` to `constants` as raw bytes (little-endian host order), for
// building the constant block of a contract.
template <class T>
void append_constant(std::vector<std::byte>& constants, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  constants.insert(constants.end(), p, p + sizeof(T));
}

}  // namespace accord
