#include "accord/guards.h"

#include <utility>

#include "client/src/transport.h"

namespace accord {

ReadGuard::ReadGuard(ReadGuard&& other) noexcept
    : owner_(std::move(other.owner_)), bytes_(std::exchange(other.bytes_, {})) {}
ReadGuard& ReadGuard::operator=(ReadGuard&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::move(other.owner_);
    bytes_ = std::exchange(other.bytes_, {});
  }
  return *this;
}
ReadGuard::~ReadGuard() { release(); }
void ReadGuard::release() noexcept {
  if (auto owner = std::move(owner_)) owner->release(detail::LeaseMode::Read);
  bytes_ = {};
}

WriteGuard::WriteGuard(WriteGuard&& other) noexcept
    : owner_(std::move(other.owner_)), bytes_(std::exchange(other.bytes_, {})) {}
WriteGuard& WriteGuard::operator=(WriteGuard&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::move(other.owner_);
    bytes_ = std::exchange(other.bytes_, {});
  }
  return *this;
}
WriteGuard::~WriteGuard() { release(); }
void WriteGuard::release() noexcept {
  if (auto owner = std::move(owner_)) owner->release(detail::LeaseMode::Write);
  bytes_ = {};
}

}  // namespace accord
