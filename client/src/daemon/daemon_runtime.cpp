#include "client/src/daemon/daemon_runtime.h"

#include <cstdlib>
#include <cstring>

#include "client/src/daemon/daemon_objects.h"

namespace accord {

namespace {

std::string default_grpc_socket() {
  const char* env = std::getenv("ACCORD_SOCKET");
  return env && *env ? env : "/run/accord/accord.sock";
}

// The session channel sits beside the gRPC socket unless ACCORD_SESSION_SOCKET says.
std::string session_socket_for(const std::string& grpc_socket) {
  const char* env = std::getenv("ACCORD_SESSION_SOCKET");
  if (env && *env) return env;
  const auto slash = grpc_socket.rfind('/');
  return (slash == std::string::npos ? std::string(".") : grpc_socket.substr(0, slash)) + "/session.sock";
}

}  // namespace

Result<Runtime> Runtime::connect(const RuntimeOptions& options) { return connect(default_grpc_socket(), options); }

Result<Runtime> Runtime::connect(const std::string& socket, const RuntimeOptions& options) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  auto impl = detail::DaemonRuntime::connect(socket, session_socket_for(socket), options);
  if (!impl.ok()) return std::move(impl).status();
  return Runtime(std::move(impl).value());
}

}  // namespace accord

namespace accord::detail {
namespace {

v1::Access to_proto(Access access) {
  switch (access) {
    case Access::Read: return v1::ACCESS_READ;
    case Access::Write: return v1::ACCESS_WRITE;
    case Access::ReadWrite: return v1::ACCESS_READ_WRITE;
  }
  return v1::ACCESS_UNSPECIFIED;
}

void to_proto(const BindingRecord& binding, v1::BufferView& out) {
  out.set_buffer(static_cast<DaemonBuffer&>(*binding.buffer).handle());
  out.set_offset(binding.offset);
  out.set_length(binding.length);
}

// "host", "gpu:0", "npu:1" as accordd writes them; the host for anything else (an older
// accordd sends no device).
DeviceId parse_device(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return DeviceId::host();
  const std::string kind = text.substr(0, colon);
  const int ordinal = std::atoi(text.c_str() + colon + 1);
  if (kind == "gpu") return DeviceId::gpu(ordinal);
  if (kind == "npu") return DeviceId::npu(ordinal);
  return DeviceId::host();
}

Statistics from_proto(const v1::Statistics& s) {
  Statistics out;
  out.native_graphs_prepared = s.native_graphs_prepared();
  out.copy_streams_created = s.copy_streams_created();
  out.allocations = s.allocations();
  out.imports = s.imports();
  out.submissions = s.submissions();
  out.completions = s.completions();
  out.copied_bytes = s.copied_bytes();
  out.uploaded_bytes = s.uploaded_bytes();
  out.downloaded_bytes = s.downloaded_bytes();
  out.device_copied_bytes = s.device_copied_bytes();
  out.cache_maintenance_bytes = s.cache_maintenance_bytes();
  out.live_bytes = s.live_bytes();
  out.peak_bytes = s.peak_bytes();
  out.devices_lost = s.devices_lost();
  return out;
}

}  // namespace

Result<std::shared_ptr<DaemonRuntime>> DaemonRuntime::connect(const std::string& grpc_socket,
                                                              const std::string& session_socket,
                                                              const RuntimeOptions& options) {
  auto connection = DaemonConnection::open(grpc_socket, session_socket, options);
  if (!connection.ok()) return std::move(connection).status();
  // options() reports what accordd granted, which may be less than what was asked.
  std::shared_ptr<DaemonRuntime> runtime(new DaemonRuntime(connection.value()->granted(options)));
  runtime->connection_ = std::move(connection).value();
  if (const DaemonRing* ring = runtime->connection_->ring(); ring != nullptr)
    runtime->ring_completions_ = std::make_unique<RingCompletions>(ring->tickets());
  return runtime;
}

Result<std::shared_ptr<BufferImpl>> DaemonRuntime::allocate(std::size_t bytes, MemoryPlacement placement) {
  v1::AllocateRequest request;
  request.set_bytes(bytes);
  v1::PlacementKind kind = v1::PLACEMENT_KIND_HOST_VISIBLE;
  switch (placement.kind()) {
    case MemoryPlacement::Kind::HostVisible: kind = v1::PLACEMENT_KIND_HOST_VISIBLE; break;
    case MemoryPlacement::Kind::GpuLocal: kind = v1::PLACEMENT_KIND_GPU_LOCAL; break;
    case MemoryPlacement::Kind::NpuLocal: kind = v1::PLACEMENT_KIND_NPU_LOCAL; break;
    case MemoryPlacement::Kind::Shared: kind = v1::PLACEMENT_KIND_SHARED; break;
  }
  request.mutable_placement()->set_kind(kind);
  request.mutable_placement()->set_device(placement.device());
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::AllocateResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(connection_->stub().Allocate(&context, request, &response), "Allocate"));
  std::byte* mapping = nullptr;
  std::size_t map_bytes = 0;
  if (response.host_mapped()) {
    auto mapped = connection_->map_buffer(response.buffer(), map_bytes);
    if (!mapped.ok()) {
      // Give the handle back before reporting; the buffer is unusable without its pages.
      DaemonBuffer orphan(self(), response.buffer(), bytes, placement, nullptr, 0);
      return std::move(mapped).status();
    }
    mapping = mapped.value();
  }
  return std::shared_ptr<BufferImpl>(
      std::make_shared<DaemonBuffer>(self(), response.buffer(), bytes, placement, mapping, map_bytes));
}

Result<std::shared_ptr<KernelImpl>> DaemonRuntime::load_kernel(DeviceId device, const std::string& plugin_path,
                                                               const std::string& name,
                                                               const KernelContract& contract) {
  ACCORD_RETURN_IF_ERROR(contract.validate());
  v1::LoadKernelRequest request;
  request.set_name(name);
  request.set_plugin_path(plugin_path);
  return send_load(request, device, name, contract);
}

Result<std::shared_ptr<KernelImpl>> DaemonRuntime::load_code(const CodeLoad& code, const KernelContract& contract) {
  v1::LoadKernelRequest request;
  request.set_name(code.name);
  // Leave room for the rest of the request (contract, name) below the daemon's limit.
  constexpr std::uint64_t kRequestSlack = 64 << 10;
  const std::uint64_t limit = connection_->max_message_bytes();
  if (limit != 0 && code.image.size() + kRequestSlack > limit) {
    ACCORD_ASSIGN_OR_RETURN(const std::uint64_t upload, connection_->upload_image(code.image));
    request.set_image_upload(upload);
  } else {
    request.set_image(std::string(reinterpret_cast<const char*>(code.image.data()), code.image.size()));
  }
  if (code.device.kind == DeviceKind::Gpu) {
    for (std::uint32_t g : code.grid) request.add_grid(g);
    for (std::uint32_t b : code.block) request.add_block(b);
    request.set_shared_bytes(code.shared_bytes);
  }
  return send_load(request, code.device, code.name, contract);
}

Result<std::shared_ptr<KernelImpl>> DaemonRuntime::send_load(v1::LoadKernelRequest& request, DeviceId device,
                                                             const std::string& name, const KernelContract& contract) {
  // Unset means the host, which keeps requests to an older accordd unchanged.
  if (device != DeviceId::host()) {
    request.mutable_device()->set_kind(to_string(device.kind));
    request.mutable_device()->set_ordinal(device.ordinal);
  }
  for (const BindingContract& b : contract.bindings) {
    v1::BindingContract* out = request.mutable_contract()->add_bindings();
    out->set_bytes(b.bytes);
    out->set_alignment(b.alignment);
    out->set_access(to_proto(b.access));
    out->set_layout(b.layout);
  }
  request.mutable_contract()->set_constants(
      std::string(reinterpret_cast<const char*>(contract.constants.data()), contract.constants.size()));
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::LoadKernelResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(connection_->stub().LoadKernel(&context, request, &response), "LoadKernel"));
  return std::shared_ptr<KernelImpl>(std::make_shared<DaemonKernel>(self(), response.kernel(), name, contract, device));
}

Result<std::shared_ptr<ExecutableGraphImpl>> DaemonRuntime::prepare(GraphRecord record) {
  v1::PrepareGraphRequest request;
  for (const NodeRecord& node : record.nodes) {
    v1::Node* out = request.add_nodes();
    switch (node.kind) {
      case NodeKind::Fill:
        out->mutable_fill()->set_value(node.fill_value);
        to_proto(node.bindings[0], *out->mutable_fill()->mutable_destination());
        break;
      case NodeKind::Copy:
        to_proto(node.bindings[0], *out->mutable_copy()->mutable_destination());
        to_proto(node.bindings[1], *out->mutable_copy()->mutable_source());
        if (node.lane) out->mutable_copy()->set_lane(static_cast<v1::Lane>(static_cast<int>(*node.lane) + 1));
        break;
      case NodeKind::Kernel: {
        // Host kernels keep the original field, so an older accordd still understands them.
        v1::KernelOp* op = node.kernel->device() == DeviceId::host() ? out->mutable_host_kernel()
                                                                     : out->mutable_kernel();
        op->set_kernel(static_cast<DaemonKernel&>(*node.kernel).handle());
        op->set_allow_aliasing(node.allow_aliasing);
        for (const BindingRecord& b : node.bindings) to_proto(b, *op->add_bindings());
        break;
      }
    }
  }
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::PrepareGraphResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(connection_->stub().PrepareGraph(&context, request, &response), "PrepareGraph"));
  auto graph = std::make_shared<DaemonGraph>(self(), response.graph());
  graph->dep_offsets.reserve(static_cast<std::size_t>(response.dependencies_size()) + 1);
  graph->dep_offsets.push_back(0);
  for (const v1::NodeDependencies& deps : response.dependencies()) {
    for (std::uint32_t d : deps.after()) graph->deps.push_back(Node{d});
    graph->dep_offsets.push_back(static_cast<std::uint32_t>(graph->deps.size()));
  }
  for (const v1::Region& r : response.regions()) {
    RegionInfo info;
    info.lane = static_cast<LaneKind>(std::max(0, static_cast<int>(r.lane()) - 1));
    for (std::uint32_t n : r.nodes()) info.nodes.push_back(Node{n});
    for (std::uint32_t p : r.predecessors()) info.predecessors.push_back(p);
    graph->regions.push_back(std::move(info));
  }
  return std::shared_ptr<ExecutableGraphImpl>(std::move(graph));
}

Statistics DaemonRuntime::statistics() {
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::GetStatisticsRequest request;
  v1::GetStatisticsResponse response;
  if (!connection_->stub().GetStatistics(&context, request, &response).ok()) return Statistics{};
  return from_proto(response.session());
}

Status DaemonRuntime::start_trace(std::size_t capacity) {
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::StartTraceRequest request;
  request.set_event_capacity(capacity);
  v1::StartTraceResponse response;
  return from_grpc(connection_->stub().StartTrace(&context, request, &response), "StartTrace");
}

std::optional<ExecutionTrace> DaemonRuntime::finish_trace() {
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::FinishTraceRequest request;
  v1::FinishTraceResponse response;
  if (!connection_->stub().FinishTrace(&context, request, &response).ok() || !response.was_running())
    return std::nullopt;
  ExecutionTrace trace;
  trace.dropped = response.dropped();
  for (const v1::TraceEvent& e : response.events())
    trace.events.push_back({e.start_us(), e.duration_us(), parse_device(e.device()), static_cast<LaneKind>(e.lane()),
                            e.copied_bytes(), e.failed()});
  return trace;
}

Result<std::vector<DeviceInfo>> DaemonRuntime::devices() {
  grpc::ClientContext context;
  connection_->prepare(context);
  v1::ListDevicesRequest request;
  v1::ListDevicesResponse response;
  ACCORD_RETURN_IF_ERROR(from_grpc(connection_->stub().ListDevices(&context, request, &response), "ListDevices"));
  std::vector<DeviceInfo> out;
  for (const v1::Device& d : response.devices()) {
    DeviceInfo info;
    info.backend = d.backend();
    info.name = d.name();
    info.reason = d.reason();
    if (d.state() == "absent") {
      info.state = DeviceState::Absent;
    } else {
      info.state = d.state() == "lost" ? DeviceState::Lost : DeviceState::Present;
      info.id = parse_device(d.kind() == "host" ? std::string("host") : d.kind() + ":" + std::to_string(d.ordinal()));
      info.target = d.target();
      info.memory_total = d.memory_bytes();
      info.memory_free = d.memory_free();
      info.uuid = d.uuid();
      info.recoveries = d.recoveries();
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace accord::detail
