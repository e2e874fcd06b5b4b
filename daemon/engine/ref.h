// Intrusive shared ownership for the engine objects whose lifetime the design makes
// shared (allocations, kernels, prepared graphs, sessions): retained by graphs and
// pending work, released by the last holder. One atomic per retain; no control block.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace accord::engine {

class RefCounted {
 public:
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

  void retain() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Adds a reference unless the last one is already gone (the object is being
  // destroyed): for walking a registry that an object leaves in its destructor.
  bool try_retain() const noexcept {
    std::uint32_t n = refs_.load(std::memory_order_relaxed);
    while (n != 0)
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acquire, std::memory_order_relaxed)) return true;
    return false;
  }
  // may destroy *this: no member access after a call that returns true.
  bool release() const noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
      return true;
    }
    return false;
  }
  std::uint32_t ref_count() const noexcept { return refs_.load(std::memory_order_relaxed); }

 protected:
  RefCounted() = default;
  virtual ~RefCounted() = default;

 private:
  mutable std::atomic<std::uint32_t> refs_{1};
};

template <class T>
class Ref {
 public:
  Ref() noexcept = default;
  Ref(std::nullptr_t) noexcept {}  // NOLINT
  // Takes over the reference the caller owns (a fresh object starts at 1).
  static Ref adopt(T* raw) noexcept { Ref r; r.ptr_ = raw; return r; }
  // Adds a reference to an object someone else owns.
  static Ref retain(T* raw) noexcept {
    if (raw) raw->retain();
    return adopt(raw);
  }
  Ref(const Ref& other) noexcept : ptr_(other.ptr_) { if (ptr_) ptr_->retain(); }
  template <class U>
  Ref(const Ref<U>& other) noexcept : ptr_(other.get()) { if (ptr_) ptr_->retain(); }  // NOLINT
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  Ref& operator=(Ref other) noexcept { std::swap(ptr_, other.ptr_); return *this; }
  ~Ref() { reset(); }

  void reset() noexcept {
    if (T* p = std::exchange(ptr_, nullptr)) p->release();
  }
  // Gives up ownership without releasing.
  T* leak() noexcept { return std::exchange(ptr_, nullptr); }
  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  friend bool operator==(const Ref& a, const Ref& b) noexcept { return a.ptr_ == b.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <class T, class... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace accord::engine
