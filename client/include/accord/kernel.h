// A loaded kernel: trusted code checked against its KernelContract when it was
// loaded. Graph::host() records it; a prepared graph keeps it alive. Copies alias.
#pragma once

#include <memory>
#include <string>

#include "accord/contract.h"
#include "accord/device_id.h"

namespace accord {

namespace detail {
class KernelImpl;
}

class Kernel {
 public:
  Kernel() = default;
  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const noexcept;
  const KernelContract& contract() const noexcept;
  // The device it was loaded onto (the host for an invalid Kernel).
  DeviceId device() const noexcept;

  explicit Kernel(std::shared_ptr<detail::KernelImpl> impl) noexcept : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::KernelImpl>& impl() const noexcept { return impl_; }

 private:
  std::shared_ptr<detail::KernelImpl> impl_;
};

}  // namespace accord
