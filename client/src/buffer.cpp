#include "accord/buffer.h"

#include "accord/guards.h"
#include "client/src/transport.h"

namespace accord {
namespace {

Status empty_handle() { return invalid_error("empty buffer handle"); }

template <class Guard>
Result<Guard> lease(const std::shared_ptr<detail::BufferImpl>& impl, detail::LeaseMode mode,
                    bool block, std::size_t offset, std::size_t size) {
  if (!impl) return empty_handle();
  ACCORD_RETURN_IF_ERROR(impl->acquire(mode, block));
  std::byte* base = impl->host_address();
  if (base == nullptr) {
    impl->release(mode);
    return unsupported_error("buffer " + std::to_string(impl->id()) + " is not mapped in this process");
  }
  if constexpr (std::is_same_v<Guard, ReadGuard>)
    return ReadGuard(impl, std::span<const std::byte>(base + offset, size));
  else
    return WriteGuard(impl, std::span<std::byte>(base + offset, size));
}

}  // namespace

std::size_t Buffer::size() const noexcept { return impl_ ? impl_->size() : 0; }
MemoryPlacement Buffer::placement() const noexcept {
  return impl_ ? impl_->placement() : MemoryPlacement::host_visible();
}
std::uint64_t Buffer::id() const noexcept { return impl_ ? impl_->id() : 0; }

BufferView Buffer::view() const { return BufferView(*this, 0, size()); }

Result<BufferView> Buffer::slice(std::size_t begin, std::size_t end) const {
  if (!impl_) return empty_handle();
  return view().slice(begin, end);
}

Result<ReadGuard> Buffer::map_read() const { return lease<ReadGuard>(impl_, detail::LeaseMode::Read, true, 0, size()); }
Result<ReadGuard> Buffer::try_map_read() const { return lease<ReadGuard>(impl_, detail::LeaseMode::Read, false, 0, size()); }
Result<WriteGuard> Buffer::map_write() const { return lease<WriteGuard>(impl_, detail::LeaseMode::Write, true, 0, size()); }
Result<WriteGuard> Buffer::try_map_write() const { return lease<WriteGuard>(impl_, detail::LeaseMode::Write, false, 0, size()); }

bool BufferView::is_host_visible() const noexcept {
  return buffer_.valid() && buffer_.impl()->host_address() != nullptr;
}

Result<BufferView> BufferView::slice(std::size_t begin, std::size_t end) const {
  if (!buffer_.valid()) return empty_handle();
  if (begin > end || end > size_)
    return invalid_error("buffer view is out of bounds: [" + std::to_string(begin) + ", " +
                         std::to_string(end) + ") of a " + std::to_string(size_) + "-byte view");
  return BufferView(buffer_, offset_ + begin, end - begin);
}

Result<ReadGuard> BufferView::map_read() const {
  return lease<ReadGuard>(buffer_.impl(), detail::LeaseMode::Read, true, offset_, size_);
}
Result<WriteGuard> BufferView::map_write() const {
  return lease<WriteGuard>(buffer_.impl(), detail::LeaseMode::Write, true, offset_, size_);
}

}  // namespace accord
