// A copy between two devices' memory when the destination's device cannot reach the
// source (no peer path between two GPUs): it is staged through host-mapped memory that
// the prepared graph owns, as a download on the source's device and then an upload on
// the destination's, each a region of its own, ordered on the host like any other
// cross-device edge (ARCHITECTURE.md, "Devices"). lowering.cpp decides when; this file
// makes the stage and says how each half addresses its two buffers.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "accord/status.h"
#include "daemon/devices/device.h"
#include "daemon/engine/allocation.h"
#include "daemon/engine/graph_spec.h"
#include "daemon/engine/ref.h"

namespace accord::engine {

class Session;

// A binding as the device that runs its operation addresses it.
struct ResolvedBinding {
  const devices::AdmittedMemory* admission = nullptr;  // null when the device is the home
  std::uint64_t address = 0;
};

struct StagedCopy {
  Ref<Allocation> stage;  // HostVisible, the copy's length (at least 1 byte), charged to the session
  devices::DeviceIndex source_device = 0;
  devices::DeviceIndex destination_device = 0;
  ResolvedBinding download[2];  // {stage, source}, on the source's device
  ResolvedBinding upload[2];    // {destination, stage}, on the destination's device
};

// Whether copy `op` (checked: equal lengths, no overlap) is one that staging can carry:
// both buffers device-local on two different devices.
bool stageable(const OperationSpec& op) noexcept;

// Makes the stage for copy `op` and admits it to both devices. `node` names the
// operation in errors. Errors: Invalid when the source's device has no Download lane or
// the destination's no Upload lane (the message says the memory is not visible and why
// staging cannot help); the allocation's or an admission's error, annotated with the
// node and the device.
Result<StagedCopy> stage_copy(Session& session, const std::string& node, const OperationSpec& op,
                              devices::DeviceIndex destination_device);

// The two bindings of one half, in copy order {destination, source}.
std::array<devices::OperationBinding, 2> download_bindings(const StagedCopy& staged, const OperationSpec& op);
std::array<devices::OperationBinding, 2> upload_bindings(const StagedCopy& staged, const OperationSpec& op);

}  // namespace accord::engine
