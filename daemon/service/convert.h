// Conversions between the accord.v1 protocol and engine types. Proto types stop here
// and in accord_service.cpp (STYLE.md rule 15); the engine never includes a .pb.h.
#pragma once

#include <optional>

#include "accord/contract.h"
#include "accord/device_id.h"
#include "accord/placement.h"
#include "accord/statistics.h"
#include "accord/trace.h"
#include "accord/v1/accord.pb.h"
#include "daemon/engine/engine.h"

namespace accord::service {

Result<MemoryPlacement> from_proto(const v1::Placement& placement, bool present);
Result<Access> from_proto(v1::Access access, const std::string& where);
Result<KernelContract> from_proto(const v1::KernelContract& contract);
std::optional<LaneKind> from_proto_lane(v1::Lane lane);
v1::Lane to_proto(LaneKind lane);
void to_proto(const Statistics& statistics, v1::Statistics& out);
// The device a request names; the host when `present` is false (the field is unset).
// Invalid naming the kind for one other than "host", "gpu" or "npu", and for a negative
// ordinal or a host ordinal other than 0.
Result<DeviceId> from_proto(const v1::DeviceSelector& device, bool present);
// ListDevices: every device of `registry` in index order with its state ("present" or
// "lost" with the cause), then one "absent" entry per backend that opened no device.
// For a caller in isolation group `isolation`, its own devices stand in for the shared
// ones of the same id (which are left out), so that "gpu:0" names the GPU it runs on.
void to_proto(const devices::DeviceRegistry& registry, v1::ListDevicesResponse& out,
              const std::string& isolation = {});
void to_proto(const ExecutionTrace& trace, v1::FinishTraceResponse& out);
// The terminal (or pending) state of a submission the caller observes.
void to_proto(engine::Submission& submission, std::uint64_t handle, v1::CompletionEvent& out);

}  // namespace accord::service
