#include "daemon/engine/staged_copy.h"

#include <algorithm>

#include "daemon/engine/device_lookup.h"
#include "daemon/engine/engine.h"

namespace accord::engine {
namespace {

// How `device` addresses the stage: its own memory when it is the stage's home, an
// admission otherwise.
Result<ResolvedBinding> resolve_stage(devices::DeviceRegistry& registry, Allocation& stage, devices::DeviceIndex device) {
  if (device == stage.home()) return ResolvedBinding{nullptr, stage.memory().device_address()};
  ACCORD_ASSIGN_OR_RETURN(const devices::AdmittedMemory* admitted,
                          stage.admission_for(device, registry.generation(device), registry.at(device),
                                              registry.at(stage.home()).info()));
  return ResolvedBinding{admitted, admitted->device_address()};
}

}  // namespace

bool stageable(const OperationSpec& op) noexcept {
  if (op.kind != devices::OpKind::Copy || op.bindings.size() != 2) return false;
  const Allocation& destination = *op.bindings[0].allocation;
  const Allocation& source = *op.bindings[1].allocation;
  return !destination.placement().host_mapped() && !source.placement().host_mapped() &&
         destination.home() != source.home();
}

Result<StagedCopy> stage_copy(Session& session, const std::string& node, const OperationSpec& op,
                              devices::DeviceIndex destination_device) {
  devices::DeviceRegistry& registry = session.engine().device_registry();
  const ViewSpec& destination = op.bindings[0];
  const ViewSpec& source = op.bindings[1];
  StagedCopy staged;
  staged.source_device = source.allocation->home();
  staged.destination_device = destination_device;
  const std::string from = device_name(registry, staged.source_device);
  const std::string to = device_name(registry, destination_device);
  if (!has_lane(registry.at(staged.source_device), LaneKind::Download) ||
      !has_lane(registry.at(destination_device), LaneKind::Upload))
    return invalid_error(node + ": memory of " + from + " is not visible to " + to +
                         ", and the copy cannot be staged through host memory: that needs a Download lane on " +
                         from + " and an Upload lane on " + to);
  if (registry.lost(staged.source_device)) return registry.lost_error(staged.source_device).annotate(node);
  const std::size_t bytes = std::max<std::size_t>(destination.length, 1);
  auto stage = session.allocate(bytes, MemoryPlacement::host_visible());
  if (!stage.ok())
    return std::move(stage).status().annotate(node + ": allocating " + std::to_string(bytes) +
                                              " bytes of host memory to stage the copy from " + from + " to " + to);
  staged.stage = std::move(stage).value();
  auto on_source = resolve_stage(registry, *staged.stage, staged.source_device);
  if (!on_source.ok()) return std::move(on_source).status().annotate(node + ": the copy's stage on " + from);
  auto on_destination = resolve_stage(registry, *staged.stage, destination_device);
  if (!on_destination.ok()) return std::move(on_destination).status().annotate(node + ": the copy's stage on " + to);
  staged.download[0] = on_source.value();
  staged.download[1] = {nullptr, source.allocation->memory().device_address()};
  staged.upload[0] = {nullptr, destination.allocation->memory().device_address()};
  staged.upload[1] = on_destination.value();
  return staged;
}

std::array<devices::OperationBinding, 2> download_bindings(const StagedCopy& staged, const OperationSpec& op) {
  const ViewSpec& source = op.bindings[1];
  return {devices::OperationBinding{&staged.stage->memory(), staged.download[0].admission, staged.download[0].address,
                                    0, source.length, Access::Write},
          devices::OperationBinding{&source.allocation->memory(), nullptr, staged.download[1].address, source.offset,
                                    source.length, Access::Read}};
}

std::array<devices::OperationBinding, 2> upload_bindings(const StagedCopy& staged, const OperationSpec& op) {
  const ViewSpec& destination = op.bindings[0];
  return {devices::OperationBinding{&destination.allocation->memory(), nullptr, staged.upload[0].address,
                                    destination.offset, destination.length, Access::Write},
          devices::OperationBinding{&staged.stage->memory(), staged.upload[1].admission, staged.upload[1].address, 0,
                                    destination.length, Access::Read}};
}

}  // namespace accord::engine
