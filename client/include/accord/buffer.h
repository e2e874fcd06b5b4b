// Tracked allocations and checked byte ranges of them. A Buffer is a handle: copies
// alias one allocation and share its lifetime and access state. A BufferView keeps its
// allocation alive, so a graph that holds views keeps every byte it touches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "accord/placement.h"
#include "accord/status.h"

namespace accord {

namespace detail {
class BufferImpl;
}
class BufferView;
class ReadGuard;
class WriteGuard;

class Buffer {
 public:
  Buffer() = default;  // an empty handle; every call on it is Invalid

  bool valid() const noexcept { return impl_ != nullptr; }
  std::size_t size() const noexcept;
  MemoryPlacement placement() const noexcept;
  // A stable identity of the allocation, equal for every alias (diagnostics, tests).
  std::uint64_t id() const noexcept;

  // The whole allocation.
  BufferView view() const;
  // Bytes [begin, end). Invalid when begin > end or end > size().
  Result<BufferView> slice(std::size_t begin, std::size_t end) const;

  // Host leases (ARCHITECTURE.md engine item 8). A lease always reserves the whole
  // allocation. map_read waits for pending device writers; map_write waits for any
  // pending device access. try_ forms return Busy instead of waiting. A conflicting live
  // lease is Busy at once (never waits). Unsupported for memory that is not host mapped;
  // DeviceLost for a poisoned allocation. Blocking forms block; all are thread-safe.
  Result<ReadGuard> map_read() const;
  Result<ReadGuard> try_map_read() const;
  Result<WriteGuard> map_write() const;
  Result<WriteGuard> try_map_write() const;

  // The transport object behind this handle (used by the library itself).
  const std::shared_ptr<detail::BufferImpl>& impl() const noexcept { return impl_; }
  explicit Buffer(std::shared_ptr<detail::BufferImpl> impl) noexcept : impl_(std::move(impl)) {}

  friend bool operator==(const Buffer& a, const Buffer& b) noexcept { return a.impl_ == b.impl_; }

 private:
  std::shared_ptr<detail::BufferImpl> impl_;
};

class BufferView {
 public:
  BufferView() = default;

  bool valid() const noexcept { return buffer_.valid(); }
  const Buffer& buffer() const noexcept { return buffer_; }
  std::size_t offset() const noexcept { return offset_; }  // in the root allocation
  std::size_t size() const noexcept { return size_; }
  bool is_host_visible() const noexcept;

  // Bytes [begin, end) relative to this view. Invalid ("buffer view is out of bounds")
  // when begin > end or end > size().
  Result<BufferView> slice(std::size_t begin, std::size_t end) const;

  // Leases mapping just this range, but reserving the whole allocation. Blocking.
  Result<ReadGuard> map_read() const;
  Result<WriteGuard> map_write() const;

 private:
  friend class Buffer;
  BufferView(Buffer buffer, std::size_t offset, std::size_t size) noexcept
      : buffer_(std::move(buffer)), offset_(offset), size_(size) {}
  Buffer buffer_;
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
};

}  // namespace accord
