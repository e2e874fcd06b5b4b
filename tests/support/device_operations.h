// One device Operation of each kind, built the way the device-level tests (the CUDA
// backend's unit tests, the device conformance suite) hand them to Device::lower: the
// spans point into the caller's bindings, which must outlive the lowering call.
#pragma once

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

}  // namespace accord::devices::testing
