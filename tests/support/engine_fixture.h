// An engine over one ManualDevice and one session, with small builders for operations,
// for scheduler and lowering unit tests that need exact control of completions.
#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "daemon/engine/engine.h"
#include "tests/support/manual_device.h"

namespace accord::testing {

// Releases the observer reference a submit hands out.
struct Observer {
  engine::Submission* s = nullptr;
  Observer() = default;
  explicit Observer(engine::Submission* sub) : s(sub) {}
  Observer(Observer&& o) noexcept : s(std::exchange(o.s, nullptr)) {}
  Observer& operator=(Observer&& o) noexcept {
    reset();
    s = std::exchange(o.s, nullptr);
    return *this;
  }
  ~Observer() { reset(); }
  void reset() {
    if (s) std::exchange(s, nullptr)->release_observer();
  }
  engine::Submission* operator->() const { return s; }
};

class EngineFixture {
 public:
  explicit EngineFixture(std::size_t workers, engine::SessionLimits limits = {}) {
    devices::DeviceRegistry registry;
    auto device = std::make_unique<ManualDevice>();
    device_ = device.get();
    registry.add(std::move(device));
    engine::EngineOptions options;
    options.worker_threads = workers;
    engine_ = std::move(engine::Engine::create(options, std::move(registry)).value());
    session_ = engine_->open_session(limits, "test").value();
  }

  // Completes whatever is still in flight so the engine can drain.
  ~EngineFixture() {
    for (int spins = 0; spins < 5000; ++spins) {
      const Statistics st = session_->statistics();
      if (st.completions == st.submissions) break;
      for (int tag : device_->in_flight_tags()) device_->complete(tag);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    session_.reset();
    engine_.reset();
  }

  ManualDevice& device() { return *device_; }
  engine::Session& session() { return *session_; }
  engine::Engine& engine() { return *engine_; }

  engine::Ref<engine::Allocation> buffer(std::size_t bytes = 256) {
    return session_->allocate(bytes, MemoryPlacement::host_visible()).value();
  }

  static engine::OperationSpec fill(const engine::Ref<engine::Allocation>& a, std::size_t offset = 0,
                                    std::size_t length = 0) {
    engine::OperationSpec op;
    op.kind = devices::OpKind::Fill;
    op.bindings.push_back({a, offset, length ? length : a->bytes() - offset});
    return op;
  }
  static engine::OperationSpec copy_on(const engine::Ref<engine::Allocation>& dst,
                                       const engine::Ref<engine::Allocation>& src, LaneKind lane,
                                       std::size_t length = 64) {
    engine::OperationSpec op;
    op.kind = devices::OpKind::Copy;
    op.lane = lane;
    op.bindings.push_back({dst, 0, length});
    op.bindings.push_back({src, 0, length});
    return op;
  }

  Result<engine::Ref<engine::PreparedGraph>> prepare(std::vector<engine::OperationSpec> ops) {
    engine::GraphSpec spec;
    spec.ops = std::move(ops);
    return session_->prepare(std::move(spec));
  }

  Result<Observer> submit(engine::PreparedGraph& graph, std::vector<engine::Submission*> after = {}) {
    auto s = session_->submit(graph, after);
    if (!s.ok()) return std::move(s).status();
    return Observer(s.value());
  }

  // Polls until `pred` holds or ~5 s pass.
  template <class Pred>
  static bool eventually(Pred pred) {
    for (int i = 0; i < 5000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pred();
  }

 private:
  ManualDevice* device_ = nullptr;
  std::unique_ptr<engine::Engine> engine_;
  engine::Ref<engine::Session> session_;
};

}  // namespace accord::testing
