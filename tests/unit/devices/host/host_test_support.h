// Helpers shared by the host device tests: a sink that records its one outcome, and
// short ways to allocate, bind, lower and launch on a HostDevice.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "daemon/devices/host/host_device.h"

namespace accord::devices::host::testing {

// Records which outcome was reported and how many times (the contract is exactly once).
class RecordingSink final : public CompletionSink {
 public:
  void on_done() noexcept override { ++done; }
  void on_error(Status error) noexcept override {
    ++errors;
    status = std::move(error);
  }
  void on_cancelled() noexcept override { ++cancelled; }
  int calls() const { return done + errors + cancelled; }

  int done = 0;
  int errors = 0;
  int cancelled = 0;
  Status status;
};

inline std::unique_ptr<DeviceMemory> allocate(Device& device, std::size_t bytes) {
  auto memory = device.allocate({bytes, MemoryPlacement::host_visible()});
  REQUIRE(memory.ok());
  return std::move(memory).value();
}

inline OperationBinding bind(const DeviceMemory& memory, Access access, std::size_t offset = 0,
                             std::size_t length = static_cast<std::size_t>(-1)) {
  if (length == static_cast<std::size_t>(-1)) length = memory.bytes() - offset;
  return OperationBinding{&memory, nullptr, memory.device_address(), offset, length, access};
}

inline float* floats(const DeviceMemory& memory) { return reinterpret_cast<float*>(memory.host_address()); }

inline void write_floats(const DeviceMemory& memory, const std::vector<float>& values) {
  std::memcpy(memory.host_address(), values.data(), values.size() * sizeof(float));
}

inline std::vector<float> read_floats(const DeviceMemory& memory, std::size_t count) {
  std::vector<float> values(count);
  std::memcpy(values.data(), memory.host_address(), count * sizeof(float));
  return values;
}

inline Operation kernel_op(const LoadedCode& code, std::span<const OperationBinding> bindings) {
  Operation op;
  op.kind = OpKind::Kernel;
  op.lane = LaneKind::Compute;
  op.code = &code;
  op.bindings = bindings;
  return op;
}

// Lowers `run` (which must succeed) and launches it, returning the recorded outcome.
inline void lower_and_launch(Device& device, std::span<const Operation> run, RecordingSink& sink) {
  auto region = device.lower(devices::RegionRequest::of(run));
  REQUIRE(region.ok());
  device.launch(**region, RegionWaits{}, sink);
  REQUIRE(sink.calls() == 1);
}

}  // namespace accord::devices::host::testing
