// One value of a setting as given, a TOML node or the text of one flag argument, and the
// readers that turn it into a typed value or an Invalid Status that names where the value
// came from. Internal to daemon/config/ (never included from outside the folder).
// Thread-safe: plain functions of their arguments, with no shared state (get_id resolves
// names with the reentrant getpwnam_r/getgrnam_r).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include <toml++/toml.h>

#include "accord/status.h"

namespace accord::daemon_config::detail {

// One value as given: a TOML node, or the text of one flag argument. `where` names it
// in messages: "/etc/accord/accordd.toml:7:1: 'workers'" or "--workers".
struct Input {
  const toml::node* node = nullptr;
  std::string_view text;
  std::string where;
  std::string key;  // Shape::Table only: the entry's key ("null.devices")
};

Status invalid(const Input& in, std::string_view problem);
Status wrong_type(const Input& in, std::string_view expected);
std::string in_quotes(std::string_view text);

template <class Int>
bool parse_whole(std::string_view text, Int& out, int base = 10) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return !text.empty() && ec == std::errc() && ptr == end;
}

Result<std::int64_t> get_integer(const Input& in);
Result<std::string> get_string(const Input& in);
Result<bool> get_bool(const Input& in);
Result<std::size_t> get_count(const Input& in, std::int64_t min, std::int64_t max);

// An integer of bytes, or a string with a K/M/G suffix, within [min, max].
Result<std::uint64_t> get_bytes_in(const Input& in, std::uint64_t min, std::uint64_t max);

// "0660", "660" or "0o660" as a string; in TOML also the octal integer 0o660. A decimal
// integer is refused: `socket_mode = 660` is almost certainly meant as octal.
Result<unsigned> get_mode(const Input& in);

enum class IdKind : std::uint8_t { User, Group };

// A uid or gid: a number, or a user or group name looked up in the system's databases.
Result<std::uint32_t> get_id(const Input& in, IdKind kind);

Result<std::string> get_absolute_path(const Input& in);
Result<std::string> get_socket_path(const Input& in);

// A backend name as `devices` lists it: lower-case letters, digits and '_' (the names of
// the folders under daemon/devices/). Whether this build has it is checked later, by
// DaemonConfig::validate(), which knows the built backends.
Result<std::string> get_backend_name(const Input& in);

// A device option's value: a string, or an integer or boolean taken as its text, since
// backends parse their own options from text.
Result<std::string> get_option_value(const Input& in);

}  // namespace accord::daemon_config::detail
