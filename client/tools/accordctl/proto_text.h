// accordctl's view of protocol values: operator-facing names of lanes, placements and
// completion states, the counters of a Statistics message in declaration order, and
// the client vocabulary's KernelContract as the proto message LoadKernel takes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accord/contract.h"
#include "accord/v1/accord.pb.h"

namespace accord::ctl {

// "upload", "compute", "download", "npu", "host"; "auto" for LANE_UNSPECIFIED (a copy
// whose lane the daemon picks by direction); "lane N" for a value this build does not know.
std::string lane_name(v1::Lane lane);
// The lanes a copy node may name in a graph file: upload, compute, download.
// Empty for anything else.
std::optional<v1::Lane> copy_lane_from_name(std::string_view name);

// "host-visible", "gpu-local", "npu-local", "shared"; "placement N" when unknown.
std::string placement_name(v1::PlacementKind kind);

// "pending", "succeeded", "failed", "cancelled"; "state N" when unknown.
std::string completion_state_name(v1::CompletionState state);

// Every counter of `statistics` as (field name, value), in the order the proto declares
// them: the seed's 13, so tables and JSON read the same as its Statistics, then
// devices_lost.
std::vector<std::pair<std::string, std::uint64_t>> statistics_counters(const v1::Statistics& statistics);

// `contract` as the proto message: bindings in order (bytes, alignment, access,
// layout) and the constant bytes verbatim.
v1::KernelContract to_proto(const KernelContract& contract);

}  // namespace accord::ctl
