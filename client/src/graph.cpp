// Record-time checks of the public Graph builder (ARCHITECTURE.md engine item 11).
// The engine checks again at prepare, since a daemon cannot trust its clients.
#include "accord/graph.h"

#include <string>

#include "accord/executable_graph.h"
#include "client/src/transport.h"

namespace accord {
namespace {

std::string node_name(std::size_t node) { return "graph node " + std::to_string(node); }

Status check_view(const detail::RuntimeImpl* runtime, std::size_t node, std::size_t binding,
                  const BufferView& view) {
  if (!view.valid())
    return invalid_error(node_name(node) + " binding " + std::to_string(binding) + ": empty buffer view");
  if (view.buffer().impl()->runtime() != runtime)
    return invalid_error(node_name(node) + " binding " + std::to_string(binding) +
                         ": buffer belongs to another runtime");
  return Status();
}

detail::BindingRecord to_record(const BufferView& view) {
  return {view.buffer().impl(), view.offset(), view.size()};
}

}  // namespace

Graph::Graph(std::shared_ptr<detail::RuntimeImpl> runtime)
    : runtime_(std::move(runtime)), record_(std::make_unique<detail::GraphRecord>()) {}
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

std::size_t Graph::size() const noexcept { return record_ ? record_->nodes.size() : 0; }

Result<Node> Graph::fill(const BufferView& destination, std::uint8_t value) {
  if (!record_) return invalid_error("graph was already prepared");
  const std::size_t node = record_->nodes.size();
  ACCORD_RETURN_IF_ERROR(check_view(runtime_.get(), node, 0, destination));
  detail::NodeRecord n;
  n.kind = detail::NodeKind::Fill;
  n.fill_value = value;
  n.bindings.push_back(to_record(destination));
  record_->nodes.push_back(std::move(n));
  return Node{static_cast<std::uint32_t>(node)};
}

Result<Node> Graph::record_copy(const BufferView& destination, const BufferView& source,
                                LaneKind lane) {
  if (!record_) return invalid_error("graph was already prepared");
  const std::size_t node = record_->nodes.size();
  ACCORD_RETURN_IF_ERROR(check_view(runtime_.get(), node, 0, destination));
  ACCORD_RETURN_IF_ERROR(check_view(runtime_.get(), node, 1, source));
  const bool same = destination.buffer() == source.buffer();
  const bool overlap = same && destination.offset() < source.offset() + source.size() &&
                       source.offset() < destination.offset() + destination.size();
  if (destination.size() != source.size() || overlap)
    return invalid_error(node_name(node) + ": copy needs equal, nonoverlapping ranges (destination " +
                         std::to_string(destination.size()) + " bytes at " +
                         std::to_string(destination.offset()) + ", source " +
                         std::to_string(source.size()) + " bytes at " + std::to_string(source.offset()) + ")");
  detail::NodeRecord n;
  n.kind = detail::NodeKind::Copy;
  if (lane != LaneKind::Host) n.lane = lane;  // Host here means "pick by direction"
  n.bindings.push_back(to_record(destination));
  n.bindings.push_back(to_record(source));
  record_->nodes.push_back(std::move(n));
  return Node{static_cast<std::uint32_t>(node)};
}

Result<Node> Graph::copy(const BufferView& destination, const BufferView& source) {
  return record_copy(destination, source, LaneKind::Host);
}

Result<Node> Graph::copy_on(const BufferView& destination, const BufferView& source, GpuLane lane) {
  return record_copy(destination, source, to_lane_kind(lane));
}

Result<Node> Graph::record_kernel(const Kernel& kernel, std::span<const BufferView> bindings,
                                  bool allow_aliasing) {
  if (!record_) return invalid_error("graph was already prepared");
  const std::size_t node = record_->nodes.size();
  if (!kernel.valid()) return invalid_error(node_name(node) + ": empty kernel handle");
  if (kernel.impl()->runtime() != runtime_.get())
    return invalid_error(node_name(node) + ": kernel '" + kernel.name() + "' belongs to another runtime");
  std::vector<BoundExtent> extents;
  extents.reserve(bindings.size());
  for (std::size_t b = 0; b < bindings.size(); ++b) {
    ACCORD_RETURN_IF_ERROR(check_view(runtime_.get(), node, b, bindings[b]));
    extents.push_back({bindings[b].buffer().id(), bindings[b].offset(), bindings[b].size()});
  }
  if (Status s = check_bindings(kernel.contract(), extents, allow_aliasing); !s.ok())
    return std::move(s).annotate(node_name(node) + " (kernel '" + kernel.name() + "')");
  detail::NodeRecord n;
  n.kind = detail::NodeKind::Kernel;
  n.kernel = kernel.impl();
  n.allow_aliasing = allow_aliasing;
  for (const BufferView& v : bindings) n.bindings.push_back(to_record(v));
  record_->nodes.push_back(std::move(n));
  return Node{static_cast<std::uint32_t>(node)};
}

Result<Node> Graph::host(const Kernel& kernel, std::span<const BufferView> bindings) {
  return record_kernel(kernel, bindings, false);
}

Result<Node> Graph::host_aliasing(const Kernel& kernel, std::span<const BufferView> bindings) {
  return record_kernel(kernel, bindings, true);
}

Result<Node> Graph::record_device_kernel(const Kernel& kernel, std::span<const BufferView> bindings,
                                         DeviceKind kind) {
  if (!record_) return invalid_error("graph was already prepared");
  const std::size_t node = record_->nodes.size();
  const char* what = kind == DeviceKind::Gpu ? "gpu" : "npu";
  if (kernel.valid() && kernel.device().kind != kind) {
    // Without any device of that kind the call cannot work at all: say so first.
    auto devices = runtime_->devices();
    bool here = false;
    if (devices.ok())
      for (const DeviceInfo& d : devices.value()) here |= d.state != DeviceState::Absent && d.id.kind == kind;
    if (devices.ok() && !here)
      return unsupported_error(node_name(node) + ": Graph::" + what + "(): no " + what + " device in this runtime (devices: " +
                               describe_devices(devices.value()) + ")");
    return invalid_error(node_name(node) + ": Graph::" + what + "() needs code loaded onto a" +
                         (kind == DeviceKind::Gpu ? " GPU" : "n NPU") + ", but '" + kernel.name() + "' was loaded onto " +
                         kernel.device().to_string());
  }
  // The rest (ownership, views, contract) as for host kernels; the engine runs the
  // kernel on its device's lane (GPU: Compute, NPU: Npu).
  return record_kernel(kernel, bindings, false);
}

Result<Node> Graph::gpu(const Kernel& kernel, std::span<const BufferView> bindings) {
  return record_device_kernel(kernel, bindings, DeviceKind::Gpu);
}

Result<Node> Graph::npu(const Kernel& program, std::span<const BufferView> bindings) {
  return record_device_kernel(program, bindings, DeviceKind::Npu);
}

Result<ExecutableGraph> Graph::prepare() && {
  if (!record_) return invalid_error("graph was already prepared");
  if (record_->nodes.empty()) return invalid_error("cannot prepare an empty graph");
  auto record = std::move(record_);
  auto prepared = runtime_->prepare(std::move(*record));
  if (!prepared.ok()) return std::move(prepared).status();
  return ExecutableGraph(std::move(prepared).value());
}

}  // namespace accord
