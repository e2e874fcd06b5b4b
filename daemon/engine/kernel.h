// A loaded kernel as the engine holds it: the device's checked code plus its owner.
// Prepared graphs retain it, so code stays loaded while any graph can run it.
#pragma once

#include <cstdint>
#include <memory>

#include "daemon/devices/device.h"
#include "daemon/engine/ref.h"

namespace accord::engine {

class Session;

class Kernel final : public RefCounted {
 public:
  Kernel(Ref<Session> session, devices::DeviceIndex device, std::uint32_t generation,
         std::unique_ptr<devices::LoadedCode> code) noexcept
      : session_(std::move(session)), device_(device), generation_(generation), code_(std::move(code)) {}

  Session& session() const noexcept { return *session_; }
  devices::DeviceIndex device_index() const noexcept { return device_; }
  // The device's generation when the code was loaded (DeviceRegistry::generation()).
  std::uint32_t generation() const noexcept { return generation_; }
  const devices::LoadedCode& code() const noexcept { return *code_; }

 private:
  ~Kernel() override = default;
  Ref<Session> session_;
  devices::DeviceIndex device_;
  std::uint32_t generation_;
  std::unique_ptr<devices::LoadedCode> code_;
};

}  // namespace accord::engine
