// UniqueDlHandle: the one owner of a dlopen() handle (STYLE.md rule 7). Move-only;
// dlclose() on destruction or reset(). Targets that use it link ${CMAKE_DL_LIBS}.
// Closing unloads the library once no other handle holds it: keep the owner alive as
// long as any function pointer taken from the library may still be called.
#pragma once

#include <dlfcn.h>

#include <utility>

namespace accord {

class UniqueDlHandle {
 public:
  constexpr UniqueDlHandle() noexcept = default;
  // Takes ownership of `handle` (a dlopen() result; may be nullptr, meaning empty).
  constexpr explicit UniqueDlHandle(void* handle) noexcept : handle_(handle) {}
  ~UniqueDlHandle() { reset(); }

  UniqueDlHandle(const UniqueDlHandle&) = delete;
  UniqueDlHandle& operator=(const UniqueDlHandle&) = delete;
  UniqueDlHandle(UniqueDlHandle&& other) noexcept : handle_(other.release()) {}
  UniqueDlHandle& operator=(UniqueDlHandle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  // The handle, still owned by *this; nullptr when empty.
  constexpr void* get() const noexcept { return handle_; }
  constexpr bool valid() const noexcept { return handle_ != nullptr; }
  constexpr explicit operator bool() const noexcept { return valid(); }

  // Gives up ownership and returns the handle; *this becomes empty.
  [[nodiscard]] void* release() noexcept { return std::exchange(handle_, nullptr); }

  // dlclose()s the owned handle, if any, and takes ownership of `handle`.
  void reset(void* handle = nullptr) noexcept {
    void* old = std::exchange(handle_, handle);
    // A failing dlclose() leaves the library loaded; there is nothing to recover.
    if (old != nullptr) static_cast<void>(::dlclose(old));
  }

  // dlsym() in the owned library; nullptr when the symbol is absent.
  void* symbol(const char* name) const noexcept { return handle_ ? ::dlsym(handle_, name) : nullptr; }

 private:
  void* handle_ = nullptr;
};

}  // namespace accord
