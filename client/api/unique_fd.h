// UniqueFd: the one owner of a POSIX file descriptor (STYLE.md rule 7). Move-only;
// closes on destruction or reset(). Used for memfds today and for sockets later; no
// raw close() outside this type.
#pragma once

#include <unistd.h>

#include <utility>

namespace accord {

class UniqueFd {
 public:
  constexpr UniqueFd() noexcept = default;
  // Takes ownership of `fd` (may be -1, meaning empty).
  constexpr explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }

  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }

  // The descriptor, still owned by *this; -1 when empty.
  constexpr int get() const noexcept { return fd_; }
  constexpr bool valid() const noexcept { return fd_ >= 0; }
  constexpr explicit operator bool() const noexcept { return valid(); }

  // Gives up ownership and returns the descriptor; *this becomes empty.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

  // Closes the owned descriptor, if any, and takes ownership of `fd`.
  void reset(int fd = -1) noexcept {
    const int old = std::exchange(fd_, fd);
    // Linux releases the descriptor even when close() reports EINTR, so retrying
    // could close a descriptor another thread just opened; the result is ignored.
    if (old >= 0) static_cast<void>(::close(old));
  }

 private:
  int fd_ = -1;
};

}  // namespace accord
