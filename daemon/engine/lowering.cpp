#include "daemon/engine/lowering.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

#include "daemon/engine/device_lookup.h"
#include "daemon/engine/engine.h"
#include "daemon/engine/staged_copy.h"

namespace accord::engine {
namespace {

using devices::OpKind;

std::string where(std::size_t node) { return "graph node " + std::to_string(node); }
std::string where(std::size_t node, std::size_t binding) {
  return where(node) + " binding " + std::to_string(binding);
}

bool ranges_overlap(const ViewSpec& a, const ViewSpec& b) {
  return a.allocation == b.allocation && a.offset < b.offset + b.length &&
         b.offset < a.offset + a.length;
}

// The lane a copy runs on when the caller did not name one (seed 2.14).
LaneKind copy_lane(const ViewSpec& destination, const ViewSpec& source) {
  const bool dst_mapped = destination.allocation->placement().host_mapped();
  const bool src_mapped = source.allocation->placement().host_mapped();
  if (src_mapped && !dst_mapped) return LaneKind::Upload;
  if (!src_mapped && dst_mapped) return LaneKind::Download;
  return LaneKind::Compute;
}

struct CheckedOp {
  devices::DeviceIndex device = 0;  // a staged copy: the destination's device
  LaneKind lane = LaneKind::Compute;
  int staged = -1;  // a copy staged through host memory: its index in the StagedCopy list
  std::size_t first_use = 0;  // into the flat use list
  std::size_t use_count = 0;
  std::uint64_t copy_bytes = 0;
};

// The lane a kernel runs on: the one lane its device's kind gives kernels
// (ARCHITECTURE.md engine item 4).
LaneKind kernel_lane(devices::DeviceKind kind) {
  switch (kind) {
    case devices::DeviceKind::Host: return LaneKind::Host;
    case devices::DeviceKind::Gpu: return LaneKind::Compute;
    case devices::DeviceKind::Npu: return LaneKind::Npu;
  }
  return LaneKind::Host;
}

// The device that runs a fill or a copy. Copies between host-mapped and device-local
// memory run on the device side (ARCHITECTURE.md, memory has a home); copies between
// two host-mapped buffers run on the host; device-local to device-local runs on the
// destination's device. A fill runs on its memory's home, or on the host when that
// home cannot fill and the memory is host mapped.
devices::DeviceIndex data_device(const devices::DeviceRegistry& registry, const OperationSpec& op) {
  constexpr devices::DeviceIndex kHost = 0;
  const Allocation& first = *op.bindings[0].allocation;
  if (op.kind == OpKind::Fill) {
    if (!has_lane(registry.at(first.home()), LaneKind::Compute) && first.placement().host_mapped()) return kHost;
    return first.home();
  }
  const Allocation& source = *op.bindings[1].allocation;
  const bool dst_mapped = first.placement().host_mapped();
  const bool src_mapped = source.placement().host_mapped();
  if (dst_mapped && src_mapped) return kHost;
  if (!dst_mapped) return first.home();
  return source.home();
}

// Validates one operation and appends its uses and resolved bindings. Access of kernel
// bindings comes from the contract: a client cannot understate what trusted code
// touches. Every binding must be visible to the device that runs the operation: its
// home, or a device that admits it.
Status check_operation(Session& session, std::size_t node, const OperationSpec& op,
                       std::vector<AccessRange>& uses, std::vector<ResolvedBinding>& resolved,
                       std::vector<StagedCopy>& staged, CheckedOp& out) {
  devices::DeviceRegistry& devices = session.engine().device_registry();
  for (std::size_t b = 0; b < op.bindings.size(); ++b) {
    const ViewSpec& v = op.bindings[b];
    if (!v.allocation) return invalid_error(where(node, b) + ": empty buffer view");
    if (&v.allocation->session() != &session)
      return invalid_error(where(node, b) + ": buffer belongs to another runtime or session");
    if (v.offset > v.allocation->bytes() || v.length > v.allocation->bytes() - v.offset)
      return invalid_error(where(node, b) + ": view [" + std::to_string(v.offset) + ", " +
                           std::to_string(v.offset + v.length) + ") is outside the allocation of " +
                           std::to_string(v.allocation->bytes()) + " bytes");
    if (v.allocation->poisoned())
      return device_lost_error(where(node, b) + ": allocation is poisoned: " +
                               v.allocation->poison_message());
  }
  // Accesses by binding; every kind but kernels has at most two bindings, and kernels
  // take theirs from the contract, so no per-operation heap storage is needed.
  Access fixed_access[2] = {Access::Write, Access::Read};
  const KernelContract* contract = op.kind == OpKind::Kernel && op.kernel ? &op.kernel->code().contract() : nullptr;
  auto access = [&](std::size_t b) { return contract ? contract->bindings[b].access : fixed_access[b]; };
  switch (op.kind) {
    case OpKind::Fill:
      if (op.bindings.size() != 1) return invalid_error(where(node) + ": fill takes one destination");
      out.lane = LaneKind::Compute;
      break;
    case OpKind::Copy: {
      if (op.bindings.size() != 2)
        return invalid_error(where(node) + ": copy takes a destination and a source");
      const ViewSpec& dst = op.bindings[0];
      const ViewSpec& src = op.bindings[1];
      if (dst.length != src.length || ranges_overlap(dst, src))
        return invalid_error(where(node) + ": copy needs equal, nonoverlapping ranges (destination " +
                             std::to_string(dst.length) + " bytes, source " +
                             std::to_string(src.length) + " bytes)");
      out.lane = op.lane ? *op.lane : copy_lane(dst, src);
      if (out.lane == LaneKind::Npu || out.lane == LaneKind::Host)
        return invalid_error(where(node) + ": copies run on the Upload, Compute or Download lane");
      out.copy_bytes = dst.length;
      break;
    }
    case OpKind::Kernel: {
      if (!op.kernel) return invalid_error(where(node) + ": kernel operation without a kernel");
      if (&op.kernel->session() != &session)
        return invalid_error(where(node) + ": kernel belongs to another runtime or session");
      constexpr std::size_t kInline = 16;
      std::array<BoundExtent, kInline> inline_extents;
      std::vector<BoundExtent> heap_extents;
      std::span<BoundExtent> extents(inline_extents.data(), std::min(op.bindings.size(), kInline));
      if (op.bindings.size() > kInline) {
        heap_extents.resize(op.bindings.size());
        extents = heap_extents;
      }
      for (std::size_t b = 0; b < op.bindings.size(); ++b)
        extents[b] = {op.bindings[b].allocation->id(), op.bindings[b].offset, op.bindings[b].length};
      if (Status s = check_bindings(*contract, extents, op.allow_aliasing); !s.ok())
        return std::move(s).annotate(where(node) + " (kernel '" + op.kernel->code().name() + "')");
      break;
    }
  }
  out.device = op.kind == OpKind::Kernel ? op.kernel->device_index() : data_device(devices, op);
  devices::Device& device = devices.at(out.device);
  if (op.kind == OpKind::Kernel) out.lane = kernel_lane(device.info().kind);
  if (op.kind == OpKind::Kernel) {
    if (Status s = devices.check_generation(out.device, op.kernel->generation()); !s.ok())
      return std::move(s).annotate(where(node) + " (kernel '" + op.kernel->code().name() + "')");
  } else if (devices.lost(out.device)) {
    return devices.lost_error(out.device).annotate(where(node));
  }
  if (!has_lane(device, out.lane))
    return unsupported_error(where(node) + ": device " + device_name(devices, out.device) + " has no " +
                             std::string(to_string(out.lane)) + " lane");
  for (std::size_t b = 0; b < op.bindings.size(); ++b) {
    Allocation& allocation = *op.bindings[b].allocation;
    const devices::DeviceIndex home = allocation.home();
    if (Status s = devices.check_generation(home, allocation.home_generation()); !s.ok())
      return std::move(s).annotate(where(node, b));
    if (home == out.device) {
      resolved.push_back({nullptr, allocation.memory().device_address()});
      continue;
    }
    auto admitted =
        allocation.admission_for(out.device, devices.generation(out.device), device, devices.at(home).info());
    if (!admitted.ok() && admitted.status().kind() == ErrorKind::Unsupported && stageable(op)) {
      // No path from the destination's device to the source: through host memory.
      ACCORD_ASSIGN_OR_RETURN(StagedCopy copy, stage_copy(session, where(node), op, out.device));
      out.staged = static_cast<int>(staged.size());
      staged.push_back(std::move(copy));
      resolved.push_back({});  // the halves address their buffers through `staged`
      continue;
    }
    if (!admitted.ok()) {
      Status status = std::move(admitted).status();
      const std::string what = where(node, b) + ": memory of " + device_name(devices, home) +
                               " is not visible to " + device_name(devices, out.device) +
                               ", which runs the operation";
      if (status.kind() == ErrorKind::Unsupported) return invalid_error(what + ": " + std::string(status.message()));
      return std::move(status).annotate(what);
    }
    resolved.push_back({admitted.value(), admitted.value()->device_address()});
  }
  out.first_use = uses.size();
  for (std::size_t b = 0; b < op.bindings.size(); ++b) {
    const ViewSpec& v = op.bindings[b];
    // Shared allocations are tracked whole (engine item 1).
    const bool whole = v.allocation->placement().tracked_whole();
    uses.push_back({v.allocation->id(), whole ? 0 : v.offset,
                    whole ? v.allocation->bytes() : v.offset + v.length, access(b)});
  }
  out.use_count = op.bindings.size();
  return Status();
}

}  // namespace

Result<Ref<PreparedGraph>> GraphLowering::prepare(Session& session, GraphSpec spec) {
  if (spec.ops.empty()) return invalid_error("cannot prepare an empty graph");
  if (spec.ops.size() > (1u << 24)) return invalid_error("graph has too many nodes");
  Engine& engine = session.engine();
  // Generations before anything is admitted or lowered: a device that restarts while
  // this runs leaves the graph stale, never current with regions of the old executor.
  std::vector<std::uint32_t> generations(engine.devices().size());
  for (std::size_t d = 0; d < generations.size(); ++d) generations[d] = engine.devices().generation(d);

  std::vector<AccessRange> uses;
  uses.reserve(spec.ops.size() * 3);
  std::vector<ResolvedBinding> resolved;
  resolved.reserve(spec.ops.size() * 3);
  std::vector<CheckedOp> checked(spec.ops.size());
  std::vector<StagedCopy> staged;
  for (std::size_t i = 0; i < spec.ops.size(); ++i)
    ACCORD_RETURN_IF_ERROR(check_operation(session, i, spec.ops[i], uses, resolved, staged, checked[i]));
  const devices::DeviceRegistry& registry = engine.devices();

  auto graph = make_ref<PreparedGraph>(Ref<Session>::retain(&session), engine.next_id());
  PreparedGraph& g = *graph;
  g.op_count_ = spec.ops.size();

  std::vector<std::span<const AccessRange>> per_op(spec.ops.size());
  for (std::size_t i = 0; i < spec.ops.size(); ++i)
    per_op[i] = std::span<const AccessRange>(uses.data() + checked[i].first_use, checked[i].use_count);
  g.deps_ = infer_dependencies(per_op);

  // Regions: maximal runs of consecutive operations on one (device, lane); every NPU
  // operation is a region of its own (a command list per program, as in the seed), and
  // so is each half of a staged copy (its download, then its upload). An operation's
  // predecessors wait for it to leave its last region; its first region waits for them.
  std::vector<std::uint32_t> first_region(spec.ops.size());
  std::vector<std::uint32_t> last_region(spec.ops.size());
  enum class Half : std::uint8_t { None, Download, Upload };
  std::vector<Half> half_of;  // per region
  auto add_to_region = [&](std::size_t op, devices::DeviceIndex device, LaneKind lane, Half half) {
    const bool extend = half == Half::None && !g.regions_.empty() && half_of.back() == Half::None &&
                        g.regions_.back().device == device && g.regions_.back().lane == lane && lane != LaneKind::Npu;
    if (!extend) {
      PreparedRegion r;
      r.device = device;
      r.lane = lane;
      r.lane_slot = static_cast<std::uint32_t>(r.device) * kLaneKindCount + static_cast<std::uint32_t>(r.lane);
      r.native_waits = registry.at(r.device).waits_natively();
      g.regions_.push_back(std::move(r));
      half_of.push_back(half);
    }
    PreparedRegion& r = g.regions_.back();
    r.ops.push_back(static_cast<std::uint32_t>(op));
    r.copy_bytes += checked[op].copy_bytes;
    return static_cast<std::uint32_t>(g.regions_.size() - 1);
  };
  for (std::size_t i = 0; i < spec.ops.size(); ++i) {
    if (checked[i].staged >= 0) {
      const StagedCopy& s = staged[static_cast<std::size_t>(checked[i].staged)];
      first_region[i] = add_to_region(i, s.source_device, LaneKind::Download, Half::Download);
      last_region[i] = add_to_region(i, s.destination_device, LaneKind::Upload, Half::Upload);
    } else {
      first_region[i] = last_region[i] = add_to_region(i, checked[i].device, checked[i].lane, Half::None);
    }
  }
  // Region predecessors: the operation edges contracted onto regions. Regions are
  // contiguous in recording order and only the last region grows, so every edge goes
  // from an earlier region to a later one: this keeps every ordering and stays acyclic.
  for (std::size_t i = 0; i < spec.ops.size(); ++i) {
    PreparedRegion& r = g.regions_[first_region[i]];
    for (OpIndex d : g.deps_.of(static_cast<OpIndex>(i)))
      if (last_region[d] != first_region[i]) r.predecessors.push_back(last_region[d]);
    if (last_region[i] != first_region[i]) g.regions_[last_region[i]].predecessors.push_back(first_region[i]);
  }
  for (std::size_t ri = 0; ri < g.regions_.size(); ++ri) {
    auto& p = g.regions_[ri].predecessors;
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    if (ri > 0 && !std::binary_search(p.begin(), p.end(), static_cast<std::uint32_t>(ri - 1)))
      g.parallel_ = true;
  }

  // Devices the graph touches: where its regions run and where its memory lives.
  for (std::size_t i = 0; i < spec.ops.size(); ++i) {
    g.devices_.push_back(checked[i].device);
    for (const ViewSpec& v : spec.ops[i].bindings) g.devices_.push_back(v.allocation->home());
  }
  for (const StagedCopy& s : staged) g.devices_.push_back(s.stage->home());
  std::sort(g.devices_.begin(), g.devices_.end());
  g.devices_.erase(std::unique(g.devices_.begin(), g.devices_.end()), g.devices_.end());
  for (devices::DeviceIndex d : g.devices_) g.device_generations_.push_back(generations[d]);

  // Lower each region on its device, with the inferred edges between its operations.
  std::vector<devices::OperationBinding> bindings;
  std::vector<devices::Operation> run;
  std::vector<devices::OperationEdge> edges;
  for (std::size_t ri = 0; ri < g.regions_.size(); ++ri) {
    PreparedRegion& r = g.regions_[ri];
    bindings.clear();
    run.clear();
    edges.clear();
    std::size_t total = 0;
    for (std::uint32_t op : r.ops) total += spec.ops[op].bindings.size();
    bindings.reserve(total);
    bool has_non_copy = false;
    for (std::uint32_t op : r.ops) {
      const OperationSpec& s = spec.ops[op];
      const CheckedOp& c = checked[op];
      const std::size_t first = bindings.size();
      if (half_of[ri] != Half::None) {
        const StagedCopy& copy = staged[static_cast<std::size_t>(c.staged)];
        for (const devices::OperationBinding& b :
             half_of[ri] == Half::Download ? download_bindings(copy, s) : upload_bindings(copy, s))
          bindings.push_back(b);
      } else {
        for (std::size_t b = 0; b < s.bindings.size(); ++b) {
          const AccessRange& u = uses[c.first_use + b];
          const ResolvedBinding& rb = resolved[c.first_use + b];
          bindings.push_back({&s.bindings[b].allocation->memory(), rb.admission, rb.address, s.bindings[b].offset,
                              s.bindings[b].length, u.access});
        }
      }
      devices::Operation o;
      o.kind = s.kind;
      o.lane = r.lane;
      o.fill_value = s.fill_value;
      o.code = s.kernel ? &s.kernel->code() : nullptr;
      o.bindings = std::span<const devices::OperationBinding>(bindings.data() + first, s.bindings.size());
      o.node = op;
      run.push_back(o);
      has_non_copy |= s.kind != OpKind::Copy;
      // Regions are contiguous in recording order, so an operation's position in the
      // run is its distance from the region's first operation.
      const std::size_t before_edges = edges.size();
      for (OpIndex d : g.deps_.of(static_cast<OpIndex>(op)))
        if (last_region[d] == ri) edges.push_back({d - r.ops.front(), op - r.ops.front()});
      std::sort(edges.begin() + static_cast<std::ptrdiff_t>(before_edges), edges.end(),
                [](const devices::OperationEdge& a, const devices::OperationEdge& b) { return a.before < b.before; });
    }
    devices::RegionRequest request;
    request.operations = run;
    request.edges = edges;
    request.slots = static_cast<std::uint32_t>(session.limits().graph_slots);
    request.priority = session.limits().priority;
    request.tenant = session.tenant();
    auto native = engine.device_registry().at(r.device).lower(request);
    if (!native.ok())
      return std::move(native).status().annotate("lowering region " + std::to_string(ri) + " (" +
                                                 std::string(to_string(r.lane)) + " lane)");
    r.native = std::move(native).value();
    if (has_non_copy) {
      session.counters().add_native_graph();
      engine.counters().add_native_graph();
    }
  }

  // Union summary, used-allocation list and retention.
  g.summary_ = AccessSummary::build(uses);
  g.self_conflicting_ = g.summary_.writes_anything();
  // Allocation objects by id: graphs touch few distinct allocations, so a hash map
  // beats sorting one entry per binding.
  struct FirstUse {
    Allocation* allocation;
    std::uint32_t node, binding;
  };
  std::unordered_map<std::uint64_t, FirstUse> by_id;
  by_id.reserve(64);
  for (std::size_t n = 0; n < spec.ops.size(); ++n)
    for (std::size_t b = 0; b < spec.ops[n].bindings.size(); ++b) {
      Allocation* a = spec.ops[n].bindings[b].allocation.get();
      by_id.try_emplace(a->id(), FirstUse{a, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(b)});
    }
  for (const SummaryInterval& iv : g.summary_.intervals()) {
    if (g.uses_.empty() || g.uses_.back().allocation->id() != iv.allocation) {
      const FirstUse& first = by_id.at(iv.allocation);
      g.retained_.push_back(Ref<Allocation>::retain(first.allocation));
      g.uses_.push_back({first.allocation, false, false, first.node, first.binding});
    }
    g.uses_.back().reads |= iv.read;
    g.uses_.back().writes |= iv.write;
  }
  // Allocations bound only through empty views have no summary interval but are still
  // bound to the graph: retain them too, so a region never points at freed memory.
  if (by_id.size() != g.uses_.size()) {
    for (const auto& [id, first] : by_id) {
      Allocation* allocation = first.allocation;
      const auto it = std::lower_bound(g.uses_.begin(), g.uses_.end(), id,
                                       [](const AllocationUse& u, std::uint64_t key) { return u.allocation->id() < key; });
      if (it == g.uses_.end() || it->allocation != allocation)
        g.retained_.push_back(Ref<Allocation>::retain(allocation));
    }
  }
  for (OperationSpec& s : spec.ops)
    if (s.kernel) g.kernels_.push_back(std::move(s.kernel));
  // Stages are the graph's own: never leased, poisoned or seen by the client. Reusing one
  // across submissions is safe because a staged copy writes its destination, so the
  // graph conflicts with itself and its submissions run one after another.
  for (StagedCopy& s : staged) g.retained_.push_back(std::move(s.stage));

  const std::size_t slots = session.limits().graph_slots;
  g.slots_.reserve(slots);
  for (std::size_t i = 0; i < slots; ++i)
    g.slots_.push_back(std::make_unique<Submission>(g, static_cast<std::uint32_t>(i), g.regions_.size()));
  return graph;
}

Result<Ref<PreparedGraph>> Session::prepare(GraphSpec spec) {
  return GraphLowering::prepare(*this, std::move(spec));
}

}  // namespace accord::engine
