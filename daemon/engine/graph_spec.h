// What a client asks the engine to prepare: operations with their bound views, in
// recording order. Transport-neutral: the embedded transport builds it from the
// client's Graph, the daemon service from a PrepareGraph request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "accord/access.h"
#include "accord/lane.h"
#include "daemon/devices/device.h"
#include "daemon/engine/allocation.h"
#include "daemon/engine/kernel.h"

namespace accord::engine {

struct ViewSpec {
  Ref<Allocation> allocation;
  std::size_t offset = 0;
  std::size_t length = 0;
};

struct OperationSpec {
  devices::OpKind kind = devices::OpKind::Fill;
  // Copy: an explicit lane (copy_on); empty picks one from the copy direction.
  std::optional<LaneKind> lane;
  std::uint8_t fill_value = 0;
  Ref<Kernel> kernel;  // OpKind::Kernel only
  // Fill: {destination}. Copy: {destination, source}. Kernel: contract order; the
  // access of each binding comes from the kernel's contract, never from the request.
  std::vector<ViewSpec> bindings;
  bool allow_aliasing = false;  // kernel only: overlapping writable bindings allowed
};

struct GraphSpec {
  std::vector<OperationSpec> ops;
};

}  // namespace accord::engine
