#include "client/src/embedded/embedded_runtime.h"

#include <algorithm>

#include "client/src/embedded/embedded_objects.h"
#include "daemon/devices/composition/open_devices.h"
#include "daemon/emulation/npu_emulator_env.h"
#ifdef ACCORD_HAVE_GPU_EXECUTORS
#include "daemon/executor/open_gpu_executors.h"
#endif

namespace accord {

Result<Runtime> Runtime::embedded(const RuntimeOptions& options) {
  auto impl = detail::EmbeddedRuntime::create(options);
  if (!impl.ok()) return std::move(impl).status();
  return Runtime(std::move(impl).value());
}

}  // namespace accord

namespace accord::detail {

Result<std::shared_ptr<EmbeddedRuntime>> EmbeddedRuntime::create(const RuntimeOptions& options) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  devices::DeviceSettings settings;
  settings.backends = options.devices;
  settings.options = options.device_options;
  if (options.npu_emulator) {
    // Process-wide: the Level Zero loader reads ZE_ENABLE_ALT_DRIVERS at its first zeInit.
    ACCORD_RETURN_IF_ERROR(emulation::enable_npu_emulator());
    if (!settings.backends.empty() &&
        std::find(settings.backends.begin(), settings.backends.end(), "level_zero") == settings.backends.end())
      settings.backends.push_back("level_zero");
  }
  settings.allow_plugins = options.allow_plugins;
  if (!options.gpu_executor.empty()) {
#ifdef ACCORD_HAVE_GPU_EXECUTORS
    settings.gpu_executor_binary = options.gpu_executor;
    settings.gpu_executor_factory = &executor::open_gpu_executors_factory;
#else
    return unsupported_error("RuntimeOptions::gpu_executor: this libaccord was built without the daemon, which "
                             "GPU executors need");
#endif
  }
  auto registry = devices::open_devices(settings);
  if (!registry.ok()) return std::move(registry).status();

  engine::EngineOptions engine_options;
  engine_options.worker_threads = options.worker_threads;
  engine_options.watchdog_timeout = options.watchdog_timeout;
  engine_options.forecast_sleep = options.forecast_sleep == ForecastSleep::Always;
  auto engine = engine::Engine::create(engine_options, std::move(registry).value());
  if (!engine.ok()) return std::move(engine).status();

  engine::SessionLimits limits;
  limits.max_submissions = options.max_submissions;
  limits.graph_slots = options.graph_slots;
  limits.memory_budget = options.memory_budget;
  limits.priority = options.priority;  // in process: granted as asked
  auto session = engine.value()->open_session(limits, "embedded");
  if (!session.ok()) return std::move(session).status();

  std::shared_ptr<EmbeddedRuntime> runtime(new EmbeddedRuntime(options));
  runtime->engine_ = std::move(engine).value();
  runtime->session_ = std::move(session).value();
  return runtime;
}

EmbeddedRuntime::~EmbeddedRuntime() {
  // Every handle that could reach the engine held this runtime, so only engine-internal
  // references remain; the engine drains them before it goes.
  session_.reset();
  engine_.reset();
}

Result<std::shared_ptr<BufferImpl>> EmbeddedRuntime::allocate(std::size_t bytes, MemoryPlacement placement) {
  auto allocation = session_->allocate(bytes, placement);
  if (!allocation.ok()) return std::move(allocation).status();
  return std::shared_ptr<BufferImpl>(std::make_shared<EmbeddedBuffer>(self(), std::move(allocation).value()));
}

Result<std::shared_ptr<KernelImpl>> EmbeddedRuntime::load_kernel(DeviceId device, const std::string& plugin_path,
                                                                 const std::string& name,
                                                                 const KernelContract& contract) {
  devices::CodeImage image;
  image.kind = plugin_path.empty() ? devices::CodeImage::Kind::Builtin : devices::CodeImage::Kind::Plugin;
  image.device = device;
  image.name = name;
  image.plugin_path = plugin_path;
  auto kernel = session_->load_kernel(image, contract);
  if (!kernel.ok()) return std::move(kernel).status();
  return std::shared_ptr<KernelImpl>(std::make_shared<EmbeddedKernel>(self(), std::move(kernel).value(), device));
}

Result<std::shared_ptr<KernelImpl>> EmbeddedRuntime::load_code(const CodeLoad& code, const KernelContract& contract) {
  devices::CodeImage image;
  image.kind = devices::CodeImage::Kind::Builtin;  // non-empty `image` makes it device code
  image.device = code.device;
  image.name = code.name;
  image.image.assign(code.image.begin(), code.image.end());
  image.grid = code.grid;
  image.block = code.block;
  image.shared_bytes = code.shared_bytes;
  auto kernel = session_->load_kernel(image, contract);
  if (!kernel.ok()) return std::move(kernel).status();
  return std::shared_ptr<KernelImpl>(std::make_shared<EmbeddedKernel>(self(), std::move(kernel).value(), code.device));
}

Result<std::vector<DeviceInfo>> EmbeddedRuntime::devices() {
  const devices::DeviceRegistry& registry = engine_->devices();
  std::vector<DeviceInfo> out;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const devices::Device& device = registry.at(i);
    const devices::DeviceInfo& info = device.info();
    DeviceInfo d;
    d.id = info.id();
    d.backend = info.backend;
    d.name = info.name;
    d.target = info.target;
    d.memory_total = info.memory_bytes;
    d.uuid = info.uuid;
    d.state = registry.lost(i) ? DeviceState::Lost : DeviceState::Present;
    d.reason = registry.loss_cause(i);
    d.memory_free = d.state == DeviceState::Present ? device.free_memory() : 0;
    d.recoveries = registry.recoveries(i);
    out.push_back(std::move(d));
  }
  for (const devices::AbsentBackend& absent : registry.absent()) {
    DeviceInfo d;
    d.backend = absent.backend;
    d.name = absent.backend;
    d.state = DeviceState::Absent;
    d.reason = absent.reason;
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::shared_ptr<ExecutableGraphImpl>> EmbeddedRuntime::prepare(GraphRecord record) {
  engine::GraphSpec spec;
  spec.ops.reserve(record.nodes.size());
  for (NodeRecord& node : record.nodes) {
    engine::OperationSpec op;
    switch (node.kind) {
      case NodeKind::Fill: op.kind = devices::OpKind::Fill; break;
      case NodeKind::Copy: op.kind = devices::OpKind::Copy; break;
      case NodeKind::Kernel: op.kind = devices::OpKind::Kernel; break;
    }
    op.lane = node.lane;
    op.fill_value = node.fill_value;
    op.allow_aliasing = node.allow_aliasing;
    if (node.kernel) op.kernel = static_cast<EmbeddedKernel&>(*node.kernel).kernel();
    op.bindings.reserve(node.bindings.size());
    for (const BindingRecord& b : node.bindings) {
      // Record-time checks made sure every buffer belongs to this runtime.
      auto& buffer = static_cast<EmbeddedBuffer&>(*b.buffer);
      op.bindings.push_back({engine::Ref<engine::Allocation>::retain(&buffer.allocation()), b.offset, b.length});
    }
    spec.ops.push_back(std::move(op));
  }
  auto prepared = session_->prepare(std::move(spec));
  if (!prepared.ok()) return std::move(prepared).status();
  return std::shared_ptr<ExecutableGraphImpl>(std::make_shared<EmbeddedGraph>(self(), std::move(prepared).value()));
}

}  // namespace accord::detail
