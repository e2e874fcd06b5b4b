// The readers of config_input_impl.h: each checks one value's type and range and names the
// flag or the file, line and key in its message.
#include "daemon/config/config_input_impl.h"

#include <grp.h>
#include <pwd.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "daemon/config/accordd_config.h"

namespace accord::daemon_config::detail {
namespace {

// getpwnam_r/getgrnam_r want a caller buffer whose needed size is only a hint.
template <class Entry, class Lookup>
std::optional<std::uint32_t> lookup_id(const std::string& name, Lookup lookup) {
  std::vector<char> buffer(16384);
  for (;;) {
    Entry entry{};
    Entry* found = nullptr;
    int rc = lookup(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<Entry, passwd>) return found->pw_uid;
    else return found->gr_gid;
  }
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// An integer of bytes, or a string with a K/M/G suffix.
Result<std::uint64_t> get_bytes(const Input& in) {
  if (!in.node) return parse_byte_size(in.text, in.where);
  if (const auto* i = in.node->as_integer()) {
    if (i->get() < 0) return invalid(in, "must not be negative, got " + std::to_string(i->get()));
    return static_cast<std::uint64_t>(i->get());
  }
  if (const auto* s = in.node->as_string()) return parse_byte_size(s->get(), in.where);
  return wrong_type(in, "an integer or a string such as \"64M\"");
}

}  // namespace

Status invalid(const Input& in, std::string_view problem) {
  return invalid_error(in.where + ": " + std::string(problem));
}

Status wrong_type(const Input& in, std::string_view expected) {
  return invalid(in, "must be " + std::string(expected) + ", not " + std::string(type_name(*in.node)));
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

Result<std::int64_t> get_integer(const Input& in) {
  if (in.node) {
    if (const auto* i = in.node->as_integer()) return i->get();
    return wrong_type(in, "an integer");
  }
  std::int64_t value = 0;
  if (!parse_whole(in.text, value)) return invalid(in, in_quotes(in.text) + " is not an integer");
  return value;
}

Result<std::string> get_string(const Input& in) {
  if (in.node) {
    if (const auto* s = in.node->as_string()) return s->get();
    return wrong_type(in, "a string");
  }
  return std::string(in.text);
}

Result<bool> get_bool(const Input& in) {
  if (in.node) {
    if (const auto* b = in.node->as_boolean()) return b->get();
    return wrong_type(in, "a boolean (true or false)");
  }
  if (in.text == "true") return true;
  if (in.text == "false") return false;
  return invalid(in, in_quotes(in.text) + " is not true or false");
}

Result<std::size_t> get_count(const Input& in, std::int64_t min, std::int64_t max) {
  ACCORD_ASSIGN_OR_RETURN(std::int64_t value, get_integer(in));
  if (value < min || value > max)
    return invalid(in, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                           ", got " + std::to_string(value));
  return static_cast<std::size_t>(value);
}

Result<std::uint64_t> get_bytes_in(const Input& in, std::uint64_t min, std::uint64_t max) {
  ACCORD_ASSIGN_OR_RETURN(std::uint64_t value, get_bytes(in));
  if (value < min || value > max)
    return invalid(in, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                           " bytes, got " + std::to_string(value));
  return value;
}

Result<unsigned> get_mode(const Input& in) {
  std::string_view text = in.text;
  std::string storage;
  if (in.node) {
    if (const auto* i = in.node->as_integer()) {
      if (!(i->flags() & toml::value_flags::format_as_octal))
        return invalid(in, "write the mode in octal, as \"0660\" or 0o660");
      if (i->get() < 0 || i->get() > 0777) return invalid(in, "must be at most 0777");
      return static_cast<unsigned>(i->get());
    }
    if (!in.node->is_string()) return wrong_type(in, "an octal string such as \"0660\"");
    storage = in.node->as_string()->get();
    text = storage;
  }
  std::string_view digits = text;
  if (digits.starts_with("0o")) digits.remove_prefix(2);
  unsigned mode = 0;
  if (digits.size() > 4 || !parse_whole(digits, mode, 8) || mode > 0777)
    return invalid(in, in_quotes(text) + " is not an octal mode between 0000 and 0777");
  return mode;
}

Result<std::uint32_t> get_id(const Input& in, IdKind kind) {
  // (uid_t)-1 means "no change" to chown and is never a real id.
  constexpr std::int64_t kMaxId = std::numeric_limits<std::uint32_t>::max() - 1;
  std::string name;
  if (in.node) {
    if (const auto* i = in.node->as_integer()) {
      if (i->get() < 0 || i->get() > kMaxId)
        return invalid(in, "id " + std::to_string(i->get()) + " is out of range");
      return static_cast<std::uint32_t>(i->get());
    }
    if (!in.node->is_string()) return wrong_type(in, kind == IdKind::User ? "a uid or a user name" : "a gid or a group name");
    name = in.node->as_string()->get();
  } else {
    name = in.text;
  }
  if (std::uint32_t id = 0; parse_whole(std::string_view(name), id)) {
    if (id > kMaxId) return invalid(in, "id " + name + " is out of range");
    return id;
  }
  std::optional<std::uint32_t> id = kind == IdKind::User ? lookup_id<passwd>(name, getpwnam_r)
                                                         : lookup_id<group>(name, getgrnam_r);
  if (!id) return invalid(in, (kind == IdKind::User ? "no user named " : "no group named ") + in_quotes(name));
  return *id;
}

Result<std::string> get_absolute_path(const Input& in) {
  ACCORD_ASSIGN_OR_RETURN(std::string path, get_string(in));
  if (path.empty() || path.front() != '/') return invalid(in, in_quotes(path) + " is not an absolute path");
  return path;
}

Result<std::string> get_socket_path(const Input& in) {
  ACCORD_ASSIGN_OR_RETURN(std::string path, get_absolute_path(in));
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    return invalid(in, in_quotes(path) + " is longer than a Unix socket path may be (" +
                           std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes)");
  return path;
}

Result<std::string> get_backend_name(const Input& in) {
  ACCORD_ASSIGN_OR_RETURN(std::string name, get_string(in));
  const bool well_formed = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!well_formed) return invalid(in, in_quotes(name) + " is not a backend name (such as host, cuda, level_zero)");
  return name;
}

Result<std::string> get_option_value(const Input& in) {
  if (in.node) {
    if (const auto* i = in.node->as_integer()) return std::to_string(i->get());
    if (const auto* b = in.node->as_boolean()) return std::string(b->get() ? "true" : "false");
    if (!in.node->is_string()) return wrong_type(in, "a string");
  }
  return get_string(in);
}

}  // namespace accord::daemon_config::detail
