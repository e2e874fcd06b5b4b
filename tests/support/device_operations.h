// One device Operation of each kind, built the way the device-level tests (the CUDA
// backend's unit tests, the device conformance suite) hand them to Device::lower: the
// spans point into the caller's bindings, which must outlive the lowering call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "daemon/devices/device.h"

namespace accord::devices::testing {

inline Operation fill_op(LaneKind lane, const OperationBinding& binding, std::uint8_t value) {
  Operation op;
  op.kind = OpKind::Fill;
  op.lane = lane;
  op.fill_value = value;
  op.bindings = std::span<const OperationBinding>(&binding, 1);
  return op;
}

// `bindings` holds {destination, source}.
inline Operation copy_op(LaneKind lane, std::span<const OperationBinding> bindings) {
  Operation op;
  op.kind = OpKind::Copy;
  op.lane = lane;
  op.bindings = bindings;
  return op;
}

inline Operation kernel_op(LaneKind lane, const LoadedCode& code, std::span<const OperationBinding> bindings) {
  Operation op;
  op.kind = OpKind::Kernel;
  op.lane = lane;
  op.code = &code;
  op.bindings = bindings;
  return op;
}

// A binding that dies with the call would leave the Operation's span dangling (a fill of
// a temporary `bind(...)` crashed a [gpu] case on the H200 once this builder was inline):
// refused at compile time.
Operation fill_op(LaneKind lane, const OperationBinding&& binding, std::uint8_t value) = delete;
template <std::size_t N>
Operation copy_op(LaneKind lane, std::array<OperationBinding, N>&& bindings) = delete;
template <std::size_t N>
Operation kernel_op(LaneKind lane, const LoadedCode& code, std::array<OperationBinding, N>&& bindings) = delete;

}  // namespace accord::devices::testing
