// Reads a fuzzer's input as a little program: bytes taken from the front, zeros once it
// runs out, so every input, however short, is a valid program. Owner thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace accord::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

  bool empty() const noexcept { return at_ >= size_; }
  std::uint8_t byte() noexcept { return at_ < size_ ? data_[at_++] : 0; }
  template <class T>
  T value() noexcept {
    T out{};
    bytes(&out, sizeof(out));
    return out;
  }
  // Copies the next `n` bytes to `out`, zero-filling what the input lacks.
  void bytes(void* out, std::size_t n) noexcept {
    const std::size_t have = at_ < size_ ? (size_ - at_ < n ? size_ - at_ : n) : 0;
    if (have > 0) std::memcpy(out, data_ + at_, have);
    if (have < n) std::memset(static_cast<std::uint8_t*>(out) + have, 0, n - have);
    at_ += have;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace accord::fuzz
