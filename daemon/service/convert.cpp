#include "daemon/service/convert.h"

#include <array>
#include <chrono>
#include <cstring>
#include <utility>

namespace accord::service {

Result<MemoryPlacement> from_proto(const v1::Placement& placement, bool present) {
  if (!present) return MemoryPlacement::host_visible();
  switch (placement.kind()) {
    case v1::PLACEMENT_KIND_UNSPECIFIED:
    case v1::PLACEMENT_KIND_HOST_VISIBLE: return MemoryPlacement::host_visible();
    case v1::PLACEMENT_KIND_GPU_LOCAL: return MemoryPlacement::gpu_local(placement.device());
    case v1::PLACEMENT_KIND_NPU_LOCAL: return MemoryPlacement::npu_local(placement.device());
    case v1::PLACEMENT_KIND_SHARED: return MemoryPlacement::shared(placement.device());
    default: return invalid_error("unknown placement kind " + std::to_string(placement.kind()));
  }
}

Result<Access> from_proto(v1::Access access, const std::string& where) {
  switch (access) {
    case v1::ACCESS_READ: return Access::Read;
    case v1::ACCESS_WRITE: return Access::Write;
    case v1::ACCESS_READ_WRITE: return Access::ReadWrite;
    default: return invalid_error(where + ": access must be READ, WRITE or READ_WRITE");
  }
}

Result<KernelContract> from_proto(const v1::KernelContract& contract) {
  KernelContract out;
  out.bindings.reserve(static_cast<std::size_t>(contract.bindings_size()));
  for (int i = 0; i < contract.bindings_size(); ++i) {
    const v1::BindingContract& b = contract.bindings(i);
    ACCORD_ASSIGN_OR_RETURN(const Access access, from_proto(b.access(), "contract binding " + std::to_string(i)));
    out.bindings.push_back({static_cast<std::size_t>(b.bytes()), static_cast<std::size_t>(b.alignment()), access,
                            b.layout()});
  }
  const std::string& constants = contract.constants();
  out.constants.resize(constants.size());
  if (!constants.empty()) std::memcpy(out.constants.data(), constants.data(), constants.size());
  ACCORD_RETURN_IF_ERROR(out.validate());
  return out;
}

std::optional<LaneKind> from_proto_lane(v1::Lane lane) {
  switch (lane) {
    case v1::LANE_UPLOAD: return LaneKind::Upload;
    case v1::LANE_COMPUTE: return LaneKind::Compute;
    case v1::LANE_DOWNLOAD: return LaneKind::Download;
    case v1::LANE_NPU: return LaneKind::Npu;
    case v1::LANE_HOST: return LaneKind::Host;
    default: return std::nullopt;
  }
}

v1::Lane to_proto(LaneKind lane) { return static_cast<v1::Lane>(static_cast<int>(lane) + 1); }

void to_proto(const Statistics& s, v1::Statistics& out) {
  out.set_native_graphs_prepared(s.native_graphs_prepared);
  out.set_copy_streams_created(s.copy_streams_created);
  out.set_allocations(s.allocations);
  out.set_imports(s.imports);
  out.set_submissions(s.submissions);
  out.set_completions(s.completions);
  out.set_copied_bytes(s.copied_bytes);
  out.set_uploaded_bytes(s.uploaded_bytes);
  out.set_downloaded_bytes(s.downloaded_bytes);
  out.set_device_copied_bytes(s.device_copied_bytes);
  out.set_cache_maintenance_bytes(s.cache_maintenance_bytes);
  out.set_live_bytes(s.live_bytes);
  out.set_peak_bytes(s.peak_bytes);
  out.set_devices_lost(s.devices_lost);
}

Result<DeviceId> from_proto(const v1::DeviceSelector& device, bool present) {
  if (!present) return DeviceId::host();
  const std::string& kind = device.kind();
  if (device.ordinal() < 0)
    return invalid_error("device " + kind + ":" + std::to_string(device.ordinal()) + ": the ordinal is negative");
  if (kind == "host") {
    if (device.ordinal() != 0)
      return invalid_error("device host:" + std::to_string(device.ordinal()) + ": the host has ordinal 0 only");
    return DeviceId::host();
  }
  if (kind == "gpu") return DeviceId::gpu(device.ordinal());
  if (kind == "npu") return DeviceId::npu(device.ordinal());
  return invalid_error("unknown device kind '" + kind + "' (expected host, gpu or npu)");
}

void to_proto(const devices::DeviceRegistry& registry, v1::ListDevicesResponse& out, const std::string& isolation) {
  const std::array<std::pair<MemoryPlacement, v1::PlacementKind>, 4> placements = {{
      {MemoryPlacement::host_visible(), v1::PLACEMENT_KIND_HOST_VISIBLE},
      {MemoryPlacement::gpu_local(), v1::PLACEMENT_KIND_GPU_LOCAL},
      {MemoryPlacement::npu_local(), v1::PLACEMENT_KIND_NPU_LOCAL},
      {MemoryPlacement::shared(), v1::PLACEMENT_KIND_SHARED},
  }};
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const devices::Device& d = registry.at(i);
    const devices::DeviceInfo& info = d.info();
    const bool replaced = !isolation.empty() && registry.isolation(i).empty() &&
                          registry.find(info.id(), isolation) != static_cast<int>(i);
    if (replaced) continue;
    v1::Device* device = out.add_devices();
    device->set_index(static_cast<std::uint32_t>(i));
    device->set_kind(accord::to_string(info.kind));
    device->set_name(info.name);
    device->set_target(info.target);
    device->set_backend(info.backend);
    device->set_ordinal(info.ordinal);
    device->set_memory_bytes(info.memory_bytes);
    device->set_uuid(info.uuid);
    if (!registry.lost(i)) device->set_memory_free(d.free_memory());
    for (LaneKind lane : d.lanes()) device->add_lanes(to_proto(lane));
    for (const auto& [placement, kind] : placements)
      if (d.supports(placement)) device->add_placements(kind);
    device->set_isolation(registry.isolation(i));
    for (const devices::DeviceEvent& e : registry.history(i)) {
      v1::DeviceEvent* event = device->add_history();
      event->set_kind(e.kind == devices::DeviceEvent::Kind::Lost ? "lost" : "recovered");
      event->set_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(e.when.time_since_epoch()).count());
      event->set_what(e.what);
    }
    device->set_recoveries(registry.recoveries(i));
    if (registry.lost(i)) {
      device->set_state("lost");
      device->set_reason(registry.loss_cause(i));
    } else {
      device->set_state("present");
    }
  }
  for (const devices::AbsentBackend& absent : registry.absent()) {
    v1::Device* device = out.add_devices();
    device->set_state("absent");
    device->set_name(absent.backend);
    device->set_backend(absent.backend);
    device->set_reason(absent.reason);
  }
}

void to_proto(const ExecutionTrace& trace, v1::FinishTraceResponse& out) {
  out.set_was_running(true);
  out.set_dropped(trace.dropped);
  for (const TraceEvent& e : trace.events) {
    v1::TraceEvent* p = out.add_events();
    p->set_start_us(e.start_us);
    p->set_duration_us(e.duration_us);
    p->set_lane(static_cast<std::uint32_t>(e.lane));
    p->set_device(e.device.to_string());
    p->set_copied_bytes(e.copied_bytes);
    p->set_failed(e.failed);
  }
  out.set_chrome_json(trace.to_json());
}

void to_proto(engine::Submission& submission, std::uint64_t handle, v1::CompletionEvent& out) {
  out.set_completion(handle);
  auto result = submission.result();
  if (!result) {
    out.set_state(v1::COMPLETION_STATE_PENDING);
    return;
  }
  if (result->ok()) out.set_state(v1::COMPLETION_STATE_SUCCEEDED);
  else if (result->kind() == ErrorKind::Cancelled) out.set_state(v1::COMPLETION_STATE_CANCELLED);
  else out.set_state(v1::COMPLETION_STATE_FAILED);
  if (!result->ok()) out.set_error(std::string(result->message()));
  if (auto profile = submission.profile()) {
    out.set_elapsed_us(profile->elapsed_us);
    out.set_queue_us(profile->queue_us.value_or(-1.0));
  }
}

}  // namespace accord::service
