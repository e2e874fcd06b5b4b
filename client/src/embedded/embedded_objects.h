// The embedded transport's buffer, kernel and prepared-graph handles: thin holders of
// engine references plus a reference to the runtime, which keeps the engine alive.
#pragma once

#include <memory>

#include "client/src/embedded/embedded_runtime.h"
#include "client/src/transport.h"
#include "daemon/engine/engine.h"

namespace accord::detail {

class EmbeddedBuffer final : public BufferImpl {
 public:
  EmbeddedBuffer(std::shared_ptr<EmbeddedRuntime> runtime, engine::Ref<engine::Allocation> allocation)
      : runtime_(std::move(runtime)), allocation_(std::move(allocation)) {}

  std::size_t size() const noexcept override { return allocation_->bytes(); }
  MemoryPlacement placement() const noexcept override { return allocation_->placement(); }
  std::uint64_t id() const noexcept override { return allocation_->id(); }
  const RuntimeImpl* runtime() const noexcept override { return runtime_.get(); }
  std::byte* host_address() const noexcept override { return allocation_->host_address(); }
  Status acquire(LeaseMode mode, bool block) override;
  void release(LeaseMode mode) noexcept override;

  engine::Allocation& allocation() const noexcept { return *allocation_; }

 private:
  std::shared_ptr<EmbeddedRuntime> runtime_;
  engine::Ref<engine::Allocation> allocation_;
};

class EmbeddedKernel final : public KernelImpl {
 public:
  EmbeddedKernel(std::shared_ptr<EmbeddedRuntime> runtime, engine::Ref<engine::Kernel> kernel, DeviceId device)
      : runtime_(std::move(runtime)), kernel_(std::move(kernel)), device_(device) {}
  const std::string& name() const noexcept override { return kernel_->code().name(); }
  const KernelContract& contract() const noexcept override { return kernel_->code().contract(); }
  const RuntimeImpl* runtime() const noexcept override { return runtime_.get(); }
  DeviceId device() const noexcept override { return device_; }
  const engine::Ref<engine::Kernel>& kernel() const noexcept { return kernel_; }

 private:
  std::shared_ptr<EmbeddedRuntime> runtime_;
  engine::Ref<engine::Kernel> kernel_;
  DeviceId device_;
};

class EmbeddedGraph final : public ExecutableGraphImpl {
 public:
  EmbeddedGraph(std::shared_ptr<EmbeddedRuntime> runtime, engine::Ref<engine::PreparedGraph> graph);
  // Allocation-free: producers are translated on the stack, the slot is preallocated.
  Result<Completion> submit_after(std::span<const Completion> after) override;

 private:
  std::shared_ptr<EmbeddedRuntime> runtime_;
  engine::Ref<engine::PreparedGraph> graph_;
};

}  // namespace accord::detail
