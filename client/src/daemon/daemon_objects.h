// The daemon transport's handles: each holds a session-scoped integer handle of
// accordd and releases it when the last client reference goes. HostVisible buffers
// are mapped from their memfd, so reads and writes under a guard are zero copy.
#pragma once

#include <memory>

#include "client/src/daemon/daemon_completion.h"
#include "client/src/daemon/daemon_connection.h"
#include "client/src/transport.h"

namespace accord::detail {

class DaemonRuntime;

class DaemonBuffer final : public BufferImpl {
 public:
  DaemonBuffer(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle, std::size_t bytes,
               MemoryPlacement placement, std::byte* mapping, std::size_t map_bytes);
  ~DaemonBuffer() override;

  std::size_t size() const noexcept override { return bytes_; }
  MemoryPlacement placement() const noexcept override { return placement_; }
  std::uint64_t id() const noexcept override { return handle_; }
  const RuntimeImpl* runtime() const noexcept override;
  std::byte* host_address() const noexcept override { return mapping_; }
  Status acquire(LeaseMode mode, bool block) override;
  void release(LeaseMode mode) noexcept override;
  std::uint64_t handle() const noexcept { return handle_; }

 private:
  std::shared_ptr<DaemonRuntime> runtime_;
  std::uint64_t handle_;
  std::size_t bytes_;
  MemoryPlacement placement_;
  std::byte* mapping_;
  std::size_t map_bytes_;
};

class DaemonKernel final : public KernelImpl {
 public:
  DaemonKernel(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle, std::string name,
               KernelContract contract, DeviceId device);
  ~DaemonKernel() override;
  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }
  const RuntimeImpl* runtime() const noexcept override;
  DeviceId device() const noexcept override { return device_; }
  std::uint64_t handle() const noexcept { return handle_; }

 private:
  std::shared_ptr<DaemonRuntime> runtime_;
  std::uint64_t handle_;
  std::string name_;
  KernelContract contract_;
  DeviceId device_;
};

class DaemonGraph final : public ExecutableGraphImpl {
 public:
  DaemonGraph(std::shared_ptr<DaemonRuntime> runtime, std::uint64_t handle);
  ~DaemonGraph() override;
  Result<Completion> submit_after(std::span<const Completion> after) override;

 private:
  std::shared_ptr<DaemonRuntime> runtime_;
  std::uint64_t handle_;
};

}  // namespace accord::detail
