#include "accord/completion.h"

#include "accord/detail/completion_impl.h"

namespace accord {
namespace {

Status empty_observer() { return invalid_error("empty completion handle"); }

}  // namespace

Completion::Completion(const Completion& other) noexcept : impl_(other.impl_), runtime_(other.runtime_) {
  if (impl_) impl_->retain_observer();
}

Completion& Completion::operator=(const Completion& other) noexcept {
  if (this != &other) {
    if (other.impl_) other.impl_->retain_observer();
    if (impl_) impl_->release_observer();
    impl_ = other.impl_;
    runtime_ = other.runtime_;
  }
  return *this;
}

Completion& Completion::operator=(Completion&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->release_observer();
    impl_ = std::exchange(other.impl_, nullptr);
    runtime_ = std::move(other.runtime_);
  }
  return *this;
}

Completion::~Completion() {
  // The observer goes before the runtime reference: releasing it may touch the engine.
  if (impl_) impl_->release_observer();
}

Status Completion::wait() const { return impl_ ? impl_->wait() : empty_observer(); }
Result<bool> Completion::wait_for(std::chrono::nanoseconds timeout) const {
  if (!impl_) return empty_observer();
  return impl_->wait_for(timeout);
}
bool Completion::poll() const noexcept { return impl_ && impl_->poll(); }
std::optional<Status> Completion::result() const {
  if (!impl_) return empty_observer();
  return impl_->result();
}
void Completion::cancel() const noexcept {
  if (impl_) impl_->cancel();
}
std::optional<CompletionProfile> Completion::profile() const {
  return impl_ ? impl_->profile() : std::nullopt;
}

}  // namespace accord
