// ByteWriter and ByteReader: hand serialisation of the executor's control messages
// (little-endian host order; both ends are the same binary). The reader checks every
// length against what is left and remembers the first failure, so a decoder reads all
// its fields and asks ok() once: a short or garbled message is an Invalid status, never
// a read past the end. Not thread-safe (one message, one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accord/status.h"

namespace accord::executor {

class ByteWriter {
 public:
  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  // A u32 length, then the bytes.
  void put_bytes(std::span<const std::byte> bytes) {
    put(static_cast<std::uint32_t>(bytes.size()));
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  void put_string(std::string_view text) { put_bytes(std::as_bytes(std::span(text.data(), text.size()))); }

  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }
  std::vector<std::byte> take() noexcept { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class ByteReader {
 public:
  // `what` names the message in errors ("hello from gpu:0 executor").
  ByteReader(std::span<const std::byte> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    if (!take(sizeof(T))) return value;
    std::memcpy(&value, bytes_.data() + at_ - sizeof(T), sizeof(T));
    return value;
  }
  // At most `limit` bytes; longer is a failure.
  std::vector<std::byte> get_bytes(std::size_t limit) {
    const auto size = get<std::uint32_t>();
    if (size > limit) return fail("a field of " + std::to_string(size) + " bytes (at most " + std::to_string(limit) + ")"), std::vector<std::byte>{};
    if (!take(size)) return {};
    return {bytes_.begin() + static_cast<std::ptrdiff_t>(at_ - size), bytes_.begin() + static_cast<std::ptrdiff_t>(at_)};
  }
  std::string get_string(std::size_t limit = 4096) {
    const std::vector<std::byte> raw = get_bytes(limit);
    return {reinterpret_cast<const char*>(raw.data()), raw.size()};
  }
  // A count of elements of at least `min_element_bytes` each: refused when the rest of
  // the message cannot hold that many, so a garbled count never drives a huge reserve.
  std::uint32_t get_count(std::size_t min_element_bytes) {
    const auto count = get<std::uint32_t>();
    if (min_element_bytes > 0 && count > (bytes_.size() - at_) / min_element_bytes) {
      fail("a count of " + std::to_string(count) + " that the message cannot hold");
      return 0;
    }
    return count;
  }

  bool ok() const noexcept { return status_.ok(); }
  bool at_end() const noexcept { return at_ == bytes_.size(); }
  // The first failure, or Invalid when bytes are left over (`exact`), or OK.
  Status finish(bool exact = true) const {
    if (!status_.ok()) return status_;
    if (exact && !at_end())
      return invalid_error(what_ + ": " + std::to_string(bytes_.size() - at_) + " bytes left over");
    return Status();
  }
  void fail(const std::string& why) {
    if (status_.ok()) status_ = invalid_error(what_ + ": " + why);
    at_ = bytes_.size();
  }

 private:
  bool take(std::size_t n) {
    if (!status_.ok()) return false;
    if (n > bytes_.size() - at_) {
      fail("truncated (" + std::to_string(n) + " bytes wanted, " + std::to_string(bytes_.size() - at_) + " left)");
      return false;
    }
    at_ += n;
    return true;
  }

  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  std::string what_;
  Status status_;
};

}  // namespace accord::executor
