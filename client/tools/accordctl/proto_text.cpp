#include "client/tools/accordctl/proto_text.h"

namespace accord::ctl {

std::string lane_name(v1::Lane lane) {
  switch (lane) {
    case v1::LANE_UNSPECIFIED: return "auto";
    case v1::LANE_UPLOAD: return "upload";
    case v1::LANE_COMPUTE: return "compute";
    case v1::LANE_DOWNLOAD: return "download";
    case v1::LANE_NPU: return "npu";
    case v1::LANE_HOST: return "host";
    default: return "lane " + std::to_string(static_cast<int>(lane));
  }
}

std::optional<v1::Lane> copy_lane_from_name(std::string_view name) {
  if (name == "upload") return v1::LANE_UPLOAD;
  if (name == "compute") return v1::LANE_COMPUTE;
  if (name == "download") return v1::LANE_DOWNLOAD;
  return std::nullopt;
}

std::string placement_name(v1::PlacementKind kind) {
  switch (kind) {
    case v1::PLACEMENT_KIND_HOST_VISIBLE: return "host-visible";
    case v1::PLACEMENT_KIND_GPU_LOCAL: return "gpu-local";
    case v1::PLACEMENT_KIND_NPU_LOCAL: return "npu-local";
    case v1::PLACEMENT_KIND_SHARED: return "shared";
    default: return "placement " + std::to_string(static_cast<int>(kind));
  }
}

std::string completion_state_name(v1::CompletionState state) {
  switch (state) {
    case v1::COMPLETION_STATE_PENDING: return "pending";
    case v1::COMPLETION_STATE_SUCCEEDED: return "succeeded";
    case v1::COMPLETION_STATE_FAILED: return "failed";
    case v1::COMPLETION_STATE_CANCELLED: return "cancelled";
    default: return "state " + std::to_string(static_cast<int>(state));
  }
}

std::vector<std::pair<std::string, std::uint64_t>> statistics_counters(const v1::Statistics& s) {
  return {
      {"native_graphs_prepared", s.native_graphs_prepared()},
      {"copy_streams_created", s.copy_streams_created()},
      {"allocations", s.allocations()},
      {"imports", s.imports()},
      {"submissions", s.submissions()},
      {"completions", s.completions()},
      {"copied_bytes", s.copied_bytes()},
      {"uploaded_bytes", s.uploaded_bytes()},
      {"downloaded_bytes", s.downloaded_bytes()},
      {"device_copied_bytes", s.device_copied_bytes()},
      {"cache_maintenance_bytes", s.cache_maintenance_bytes()},
      {"live_bytes", s.live_bytes()},
      {"peak_bytes", s.peak_bytes()},
      {"devices_lost", s.devices_lost()},
  };
}

v1::KernelContract to_proto(const KernelContract& contract) {
  v1::KernelContract out;
  for (const BindingContract& binding : contract.bindings) {
    v1::BindingContract* b = out.add_bindings();
    b->set_bytes(binding.bytes);
    b->set_alignment(binding.alignment);
    switch (binding.access) {
      case Access::Read: b->set_access(v1::ACCESS_READ); break;
      case Access::Write: b->set_access(v1::ACCESS_WRITE); break;
      case Access::ReadWrite: b->set_access(v1::ACCESS_READ_WRITE); break;
    }
    b->set_layout(binding.layout);
  }
  out.set_constants(reinterpret_cast<const char*>(contract.constants.data()), contract.constants.size());
  return out;
}

}  // namespace accord::ctl
