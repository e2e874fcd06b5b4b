// How an operation touches a buffer region. Used both to infer ordering (RAW, WAR and
// WAW order; RAR does not) and to validate kernel contracts.
#pragma once

#include <cstdint>
#include <string_view>

namespace accord {

enum class Access : std::uint8_t {
  Read,       // reads existing bytes only
  Write,      // writes without reading prior contents
  ReadWrite,  // both
};

constexpr bool writes(Access access) noexcept { return access != Access::Read; }
constexpr bool reads(Access access) noexcept { return access != Access::Write; }

constexpr std::string_view to_string(Access access) noexcept {
  switch (access) {
    case Access::Read: return "Read";
    case Access::Write: return "Write";
    case Access::ReadWrite: return "ReadWrite";
  }
  return "?";
}

}  // namespace accord
