#include "accord/runtime.h"

#include "client/src/transport.h"

namespace accord {

Status RuntimeOptions::validate() const {
  if (max_submissions == 0 || graph_slots == 0)
    return invalid_error("runtime capacities must be nonzero (max_submissions " +
                         std::to_string(max_submissions) + ", graph_slots " +
                         std::to_string(graph_slots) + ")");
  if (memory_budget && *memory_budget == 0) return invalid_error("memory_budget must be nonzero when set");
  if (priority < -1000 || priority > 1000)
    return invalid_error("priority " + std::to_string(priority) + " is not in -1000..1000");
  if (watchdog_timeout <= std::chrono::milliseconds::zero())
    return invalid_error("watchdog_timeout must be positive, got " + std::to_string(watchdog_timeout.count()) + " ms");
  return Status();
}

Result<Buffer> Runtime::allocate(std::size_t bytes, MemoryPlacement placement) const {
  auto impl = impl_->allocate(bytes, placement);
  if (!impl.ok()) return std::move(impl).status();
  return Buffer(std::move(impl).value());
}

Result<Kernel> Runtime::load_kernel(const std::string& name, const KernelContract& contract) const {
  return load_kernel(DeviceId::host(), name, contract);
}

Result<Kernel> Runtime::load_kernel(DeviceId device, const std::string& name, const KernelContract& contract) const {
  auto impl = impl_->load_kernel(device, "", name, contract);
  if (!impl.ok()) return std::move(impl).status();
  return Kernel(std::move(impl).value());
}

Result<Kernel> Runtime::load_plugin_kernel(const std::string& path, const std::string& name,
                                           const KernelContract& contract) const {
  if (path.empty()) return invalid_error("plugin path is empty");
  auto impl = impl_->load_kernel(DeviceId::host(), path, name, contract);
  if (!impl.ok()) return std::move(impl).status();
  return Kernel(std::move(impl).value());
}

Result<std::vector<DeviceInfo>> Runtime::devices() const { return impl_->devices(); }

namespace {

Result<DeviceInfo> find_device(detail::RuntimeImpl& impl, DeviceId id) {
  ACCORD_ASSIGN_OR_RETURN(std::vector<DeviceInfo> all, impl.devices());
  for (DeviceInfo& d : all)
    if (d.state != DeviceState::Absent && d.id == id) return std::move(d);
  return unsupported_error("no " + id.to_string() + " here (devices: " + describe_devices(all) + ")");
}

}  // namespace

Result<DeviceInfo> Runtime::gpu(int ordinal) const { return find_device(*impl_, DeviceId::gpu(ordinal)); }
Result<DeviceInfo> Runtime::npu(int ordinal) const { return find_device(*impl_, DeviceId::npu(ordinal)); }

Result<Kernel> Runtime::load_gpu_kernel(int gpu, GpuKernelImage image, const KernelContract& contract) const {
  ACCORD_RETURN_IF_ERROR(image.validate());
  ACCORD_RETURN_IF_ERROR(contract.validate());
  if (gpu < 0) return invalid_error("GPU ordinal " + std::to_string(gpu) + " is negative");
  detail::CodeLoad code;
  code.device = DeviceId::gpu(gpu);
  code.name = image.entry;
  code.image = image.image;
  code.grid = image.grid;
  code.block = image.block;
  code.shared_bytes = image.shared_bytes;
  auto impl = impl_->load_code(code, contract);
  if (!impl.ok()) return std::move(impl).status();
  return Kernel(std::move(impl).value());
}

Result<Kernel> Runtime::load_npu_program(int npu, std::span<const std::byte> blob, std::string label,
                                         const KernelContract& contract) const {
  if (blob.empty()) return invalid_error("NPU program '" + label + "' is empty");
  if (!contract.constants.empty())
    return invalid_error("NPU program '" + label + "': the contract has " + std::to_string(contract.constants.size()) +
                         " constant bytes, but NPU programs take buffers only");
  ACCORD_RETURN_IF_ERROR(contract.validate());
  if (npu < 0) return invalid_error("NPU ordinal " + std::to_string(npu) + " is negative");
  detail::CodeLoad code;
  code.device = DeviceId::npu(npu);
  code.name = label.empty() ? "npu program" : std::move(label);
  code.image = blob;
  auto impl = impl_->load_code(code, contract);
  if (!impl.ok()) return std::move(impl).status();
  return Kernel(std::move(impl).value());
}

Graph Runtime::graph() const { return Graph(impl_); }
Statistics Runtime::statistics() const { return impl_->statistics(); }
Status Runtime::start_trace(std::size_t event_capacity) const { return impl_->start_trace(event_capacity); }
std::optional<ExecutionTrace> Runtime::finish_trace() const { return impl_->finish_trace(); }
const RuntimeOptions& Runtime::options() const noexcept { return impl_->options(); }
bool Runtime::owns(const BufferView& view) const noexcept {
  return view.valid() && view.buffer().impl()->runtime() == impl_.get();
}

const std::string& Kernel::name() const noexcept {
  static const std::string kEmpty;
  return impl_ ? impl_->name() : kEmpty;
}
const KernelContract& Kernel::contract() const noexcept {
  static const KernelContract kEmpty;
  return impl_ ? impl_->contract() : kEmpty;
}
DeviceId Kernel::device() const noexcept { return impl_ ? impl_->device() : DeviceId::host(); }

}  // namespace accord

#ifndef ACCORD_HAVE_DAEMON_TRANSPORT
namespace accord {
// Built with ACCORD_BUILD_DAEMON=OFF: the API stays complete and says why it cannot connect.
Result<Runtime> Runtime::connect(const RuntimeOptions&) {
  return unsupported_error("libaccord was built without the daemon transport (ACCORD_BUILD_DAEMON=OFF)");
}
Result<Runtime> Runtime::connect(const std::string&, const RuntimeOptions& options) { return connect(options); }
}  // namespace accord
#endif
