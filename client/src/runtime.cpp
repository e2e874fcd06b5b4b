#include "accord/runtime.h"

#include "client/src/transport.h"

namespace accord {

Status RuntimeOptions::validate() const {
  if (max_submissions == 0 || graph_slots == 0)
    return invalid_error("runtime capacities must be nonzero (max_submissions " +
                         std::to_string(max_submissions) + ", graph_slots " +
                         std::to_string(graph_slots) + ")");
  if (memory_budget && *memory_budget == 0) return invalid_error("memory_budget must be nonzero when set");
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
