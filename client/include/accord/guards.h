// Host leases on host-visible buffers: ReadGuard is shared, WriteGuard exclusive.
// A guard maps a byte range and holds the lease until it is destroyed; releasing a
// WriteGuard makes the host's bytes authoritative for later device work. Move-only.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace accord {

namespace detail {
class BufferImpl;
}

class ReadGuard {
 public:
  ReadGuard(ReadGuard&& other) noexcept;
  ReadGuard& operator=(ReadGuard&& other) noexcept;
  ReadGuard(const ReadGuard&) = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;
  ~ReadGuard();

  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  const std::byte* data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  // The bytes as `T` elements (size() / sizeof(T) of them).
  template <class T>
  std::span<const T> as() const noexcept {
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  // Releases the lease now. Idempotent.
  void release() noexcept;

  // Used by transports.
  ReadGuard(std::shared_ptr<detail::BufferImpl> owner, std::span<const std::byte> bytes) noexcept
      : owner_(std::move(owner)), bytes_(bytes) {}

 private:
  std::shared_ptr<detail::BufferImpl> owner_;
  std::span<const std::byte> bytes_;
};

class WriteGuard {
 public:
  WriteGuard(WriteGuard&& other) noexcept;
  WriteGuard& operator=(WriteGuard&& other) noexcept;
  WriteGuard(const WriteGuard&) = delete;
  WriteGuard& operator=(const WriteGuard&) = delete;
  ~WriteGuard();

  std::span<std::byte> bytes() const noexcept { return bytes_; }
  std::byte* data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  template <class T>
  std::span<T> as() const noexcept {
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  // Publishes the host's writes and releases the lease now. Idempotent.
  void release() noexcept;

  WriteGuard(std::shared_ptr<detail::BufferImpl> owner, std::span<std::byte> bytes) noexcept
      : owner_(std::move(owner)), bytes_(bytes) {}

 private:
  std::shared_ptr<detail::BufferImpl> owner_;
  std::span<std::byte> bytes_;
};

}  // namespace accord
