// An engine over the real host device (index 0) and ThreadedDevice accelerators (a
// GPU-like one at index 1, optionally a second GPU and an NPU), for tests of memory
// homes and admissions, kernels on a named device, native waits, device loss and the
// watchdog. Sessions are opened by the test.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <string>
#include <vector>

#include "daemon/devices/host/host_registration.h"
#include "daemon/engine/engine.h"
#include "tests/support/threaded_device.h"

namespace accord::testing {

struct DeviceSetOptions {
  std::size_t workers = 2;
  bool native_waits = true;
  std::size_t gpus = 1;
  bool npu = false;
  std::size_t gpu_granularity = 1;
  bool gpu_peers = true;  // false: no GPU reaches another's memory (copies are staged)
  std::chrono::milliseconds watchdog{60'000};
  // Isolation groups: after the shared GPUs, each group gets its own gpu:0 (gpu(i) for
  // i >= gpus, in this order), as accordd's --gpu-isolation does with executors.
  std::vector<std::string> isolated_gpu0;
};

class DeviceSetFixture {
 public:
  explicit DeviceSetFixture(DeviceSetOptions options = {}) {
    devices::DeviceRegistry registry;
    registry.add(devices::host::make_host_device().value());
    for (std::size_t i = 0; i < options.gpus; ++i) {
      auto gpu = std::make_unique<ThreadedDevice>(ThreadedDeviceOptions{devices::DeviceKind::Gpu, static_cast<int>(i),
                                                                        options.native_waits, options.gpu_granularity,
                                                                        options.gpu_peers});
      gpus_.push_back(gpu.get());
      registry.add(std::move(gpu));
    }
    for (const std::string& group : options.isolated_gpu0) {
      auto gpu = std::make_unique<ThreadedDevice>(
          ThreadedDeviceOptions{devices::DeviceKind::Gpu, 0, options.native_waits, options.gpu_granularity});
      gpus_.push_back(gpu.get());
      registry.add(std::move(gpu), group);
    }
    if (options.npu) {
      auto npu = std::make_unique<ThreadedDevice>(ThreadedDeviceOptions{devices::DeviceKind::Npu, 0, options.native_waits, 1});
      npu_ = npu.get();
      registry.add(std::move(npu));
    }
    engine::EngineOptions engine_options;
    engine_options.worker_threads = options.workers;
    engine_options.watchdog_timeout = options.watchdog;
    engine_options.on_device_lost = [this](devices::DeviceIndex d, const Status&) {
      std::lock_guard lock(lost_mu_);
      lost_reports_.push_back(d);
    };
    engine_ = std::move(engine::Engine::create(engine_options, std::move(registry)).value());
  }
  ~DeviceSetFixture() {
    for (ThreadedDevice* g : gpus_) g->release();
    if (npu_) npu_->release();
  }

  engine::Engine& engine() { return *engine_; }
  ThreadedDevice& gpu(std::size_t i = 0) { return *gpus_.at(i); }
  ThreadedDevice& npu() { return *npu_; }
  // Device indices reported lost through EngineOptions::on_device_lost.
  std::vector<devices::DeviceIndex> lost_reports() {
    std::lock_guard lock(lost_mu_);
    return lost_reports_;
  }

  engine::Ref<engine::Session> open(engine::SessionLimits limits = {}) {
    return engine_->open_session(limits, "test").value();
  }

  static engine::OperationSpec fill(const engine::Ref<engine::Allocation>& a, std::uint8_t value) {
    engine::OperationSpec op;
    op.kind = devices::OpKind::Fill;
    op.fill_value = value;
    op.bindings.push_back({a, 0, a->bytes()});
    return op;
  }
  static engine::OperationSpec copy(const engine::Ref<engine::Allocation>& dst, const engine::Ref<engine::Allocation>& src) {
    engine::OperationSpec op;
    op.kind = devices::OpKind::Copy;
    op.bindings.push_back({dst, 0, dst->bytes()});
    op.bindings.push_back({src, 0, dst->bytes()});
    return op;
  }
  static engine::OperationSpec kernel(const engine::Ref<engine::Kernel>& k, const engine::Ref<engine::Allocation>& out,
                                      const engine::Ref<engine::Allocation>& in) {
    engine::OperationSpec op;
    op.kind = devices::OpKind::Kernel;
    op.kernel = k;
    op.bindings.push_back({out, 0, out->bytes()});
    op.bindings.push_back({in, 0, out->bytes()});
    return op;
  }
  // "test.increment" on `device`: binding 0 = binding 1 + 1, byte by byte.
  static engine::Ref<engine::Kernel> increment(engine::Session& session, DeviceId device) {
    KernelContract contract;
    contract.bindings = {BindingContract{1, 1, Access::Write, {}}, BindingContract{1, 1, Access::Read, {}}};
    devices::CodeImage image;
    image.name = "test.increment";
    image.device = device;
    return session.load_kernel(image, contract).value();
  }
  static engine::Ref<engine::PreparedGraph> prepare(engine::Session& session, std::vector<engine::OperationSpec> ops) {
    engine::GraphSpec spec;
    spec.ops = std::move(ops);
    return session.prepare(std::move(spec)).value();
  }

 private:
  std::unique_ptr<engine::Engine> engine_;
  std::vector<ThreadedDevice*> gpus_;
  ThreadedDevice* npu_ = nullptr;
  std::mutex lost_mu_;
  std::vector<devices::DeviceIndex> lost_reports_;
};

}  // namespace accord::testing
