// The daemon transport: the public API over accordd's gRPC control plane and session
// channel. Every object is a handle of this client's session; the session ends when
// this runtime (and every handle that keeps it alive) is gone, or the process dies.
#pragma once

#include <memory>
#include <string>

#include "client/src/daemon/daemon_completion.h"
#include "client/src/daemon/daemon_connection.h"
#include "client/src/transport.h"

namespace accord::detail {

class DaemonRuntime final : public RuntimeImpl {
 public:
  static Result<std::shared_ptr<DaemonRuntime>> connect(const std::string& grpc_socket,
                                                        const std::string& session_socket,
                                                        const RuntimeOptions& options);

  Result<std::shared_ptr<BufferImpl>> allocate(std::size_t bytes, MemoryPlacement placement) override;
  Result<std::shared_ptr<KernelImpl>> load_kernel(DeviceId device, const std::string& plugin_path,
                                                  const std::string& name, const KernelContract& contract) override;
  Result<std::shared_ptr<KernelImpl>> load_code(const CodeLoad& code, const KernelContract& contract) override;
  Result<std::vector<DeviceInfo>> devices() override;
  Result<std::shared_ptr<ExecutableGraphImpl>> prepare(GraphRecord record) override;
  Statistics statistics() override;
  Status start_trace(std::size_t capacity) override;
  std::optional<ExecutionTrace> finish_trace() override;

  DaemonConnection& connection() noexcept { return *connection_; }
  // The completions of ring submissions, one per ticket; only used when connection().ring().
  RingCompletions& ring_completions() noexcept { return *ring_completions_; }
  std::shared_ptr<DaemonRuntime> self() {
    return std::static_pointer_cast<DaemonRuntime>(shared_from_this());
  }

 private:
  explicit DaemonRuntime(const RuntimeOptions& options) : RuntimeImpl(options) {}
  // Adds the device and the contract to `request`, calls LoadKernel and wraps the handle.
  Result<std::shared_ptr<KernelImpl>> send_load(v1::LoadKernelRequest& request, DeviceId device,
                                                const std::string& name, const KernelContract& contract);
  std::unique_ptr<DaemonConnection> connection_;
  std::unique_ptr<RingCompletions> ring_completions_;  // declared after connection_: goes first
};

}  // namespace accord::detail
