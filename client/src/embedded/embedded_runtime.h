// The embedded transport: the engine and its devices (opened by the composition root,
// daemon/devices/composition) in this process, one session. It is the baseline the daemon transport's overhead is measured against.
#pragma once

#include <memory>

#include "client/src/transport.h"
#include "daemon/engine/engine.h"

namespace accord::detail {

class EmbeddedRuntime final : public RuntimeImpl {
 public:
  static Result<std::shared_ptr<EmbeddedRuntime>> create(const RuntimeOptions& options);
  ~EmbeddedRuntime() override;

  Result<std::shared_ptr<BufferImpl>> allocate(std::size_t bytes, MemoryPlacement placement) override;
  Result<std::shared_ptr<KernelImpl>> load_kernel(DeviceId device, const std::string& plugin_path,
                                                  const std::string& name, const KernelContract& contract) override;
  Result<std::shared_ptr<KernelImpl>> load_code(const CodeLoad& code, const KernelContract& contract) override;
  Result<std::vector<DeviceInfo>> devices() override;
  Result<std::shared_ptr<ExecutableGraphImpl>> prepare(GraphRecord record) override;
  Statistics statistics() override { return session_->statistics(); }
  Status start_trace(std::size_t capacity) override { return session_->start_trace(capacity); }
  std::optional<ExecutionTrace> finish_trace() override { return session_->finish_trace(); }

  engine::Session& session() const noexcept { return *session_; }
  std::shared_ptr<EmbeddedRuntime> self() {
    return std::static_pointer_cast<EmbeddedRuntime>(shared_from_this());
  }

 private:
  explicit EmbeddedRuntime(const RuntimeOptions& options) : RuntimeImpl(options) {}
  std::unique_ptr<engine::Engine> engine_;
  engine::Ref<engine::Session> session_;
};

}  // namespace accord::detail
