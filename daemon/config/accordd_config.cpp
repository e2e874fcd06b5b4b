// Flags and the TOML file share one table of settings (kSettings): each names its key,
// its flag and how a value enters AccorddConfig, so the two sources cannot drift apart
// and to_toml() writes exactly the keys the parser reads. CLI11 and toml++ report
// errors by throwing; every throw is caught in load_config and becomes an Invalid
// Status (STYLE.md rule 5: no exceptions leave a daemon/ function).
#include "daemon/config/accordd_config.h"

#include <grp.h>
#include <pwd.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

namespace accord::daemon_config {
namespace {

using service::KernelPolicy;

// One value as given: a TOML node, or the text of one flag argument. `where` names it
// in messages: "/etc/accord/accordd.toml:7:1: 'workers'" or "--workers".
struct Input {
  const toml::node* node = nullptr;
  std::string_view text;
  std::string where;
  std::string key;  // Shape::Table only: the entry's key ("null.devices")
};

Status invalid(const Input& in, std::string_view problem) {
  return invalid_error(in.where + ": " + std::string(problem));
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

Status wrong_type(const Input& in, std::string_view expected) {
  return invalid(in, "must be " + std::string(expected) + ", not " + std::string(type_name(*in.node)));
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

template <class Int>
bool parse_whole(std::string_view text, Int& out, int base = 10) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return !text.empty() && ec == std::errc() && ptr == end;
}

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

Result<std::uint64_t> get_bytes_in(const Input& in, std::uint64_t min, std::uint64_t max) {
  ACCORD_ASSIGN_OR_RETURN(std::uint64_t value, get_bytes(in));
  if (value < min || value > max)
    return invalid(in, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                           " bytes, got " + std::to_string(value));
  return value;
}

// "0660", "660" or "0o660" as a string; in TOML also the octal integer 0o660. A decimal
// integer is refused: `socket_mode = 660` is almost certainly meant as octal.
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

enum class IdKind : std::uint8_t { User, Group };

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

// A backend name as `devices` lists it: lower-case letters, digits and '_' (the names of
// the folders under daemon/devices/). Whether this build has it is checked later, by
// DaemonConfig::validate(), which knows the built backends.
Result<std::string> get_backend_name(const Input& in) {
  ACCORD_ASSIGN_OR_RETURN(std::string name, get_string(in));
  const bool well_formed = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!well_formed) return invalid(in, in_quotes(name) + " is not a backend name (such as host, cuda, level_zero)");
  return name;
}

// A device option's value: a string, or an integer or boolean taken as its text, since
// backends parse their own options from text.
Result<std::string> get_option_value(const Input& in) {
  if (in.node) {
    if (const auto* i = in.node->as_integer()) return std::to_string(i->get());
    if (const auto* b = in.node->as_boolean()) return std::string(b->get() ? "true" : "false");
    if (!in.node->is_string()) return wrong_type(in, "a string");
  }
  return get_string(in);
}

// --- the settings, in the order of deploy/accordd.toml ---

enum class Shape : std::uint8_t {
  Scalar,  // one value; a flag given twice keeps the last
  List,    // a TOML array; a repeatable flag whose values replace the file's list
  Switch,  // a boolean; the flag takes no value (or =true / =false)
  Names,   // a TOML string or array of strings; a repeatable, comma-separated flag
           // whose values replace the file's
  Table,   // a TOML table (written last in the file); a repeatable KEY=VALUE flag whose
           // entries replace the file's table
};

struct Setting {
  std::string_view key;        // TOML key
  std::string_view flag;       // command-line flag
  std::string_view type_name;  // shown in --help
  std::string_view help;
  Shape shape;
  // Called with exactly one input for Scalar and Switch, with every element for List.
  Status (*apply)(std::span<const Input> values, AccorddConfig& config);
};

// Settings whose value has the same limits from either source.
constexpr std::int64_t kMaxWorkers = 64;  // DaemonConfig::validate() agrees
constexpr std::int64_t kMaxRingPollers = 64;  // DaemonConfig::validate() agrees
constexpr std::int64_t kMaxSessions = 65536;
constexpr std::int64_t kMaxObjects = std::int64_t{1} << 24;
constexpr std::int64_t kMaxSubmissions = std::int64_t{1} << 20;
constexpr std::int64_t kMaxGraphSlots = 4096;
constexpr std::uint64_t kMinMessageBytes = 4096;
constexpr std::uint64_t kMaxMessageBytes = std::numeric_limits<std::int32_t>::max();  // gRPC takes an int
constexpr std::int64_t kMaxWatchdogSeconds = 24 * 60 * 60;
constexpr std::int64_t kMaxPriority = 1000;  // engine::kMaxPriority agrees

#define ACCORD_SET(lhs, expr)                    \
  do {                                           \
    ACCORD_ASSIGN_OR_RETURN(auto value_, expr);  \
    lhs = std::move(value_);                     \
  } while (false)

const Setting kSettings[] = {
    {"log_level", "--log-level", "LEVEL", "trace, debug, info, warn or error", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_ASSIGN_OR_RETURN(std::string s, get_string(v[0]));
       for (LogLevel level : {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error}) {
         if (s == to_string(level)) {
           c.log_level = level;
           return {};
         }
       }
       return invalid(v[0], in_quotes(s) + " is not one of trace, debug, info, warn, error");
     }},
    {"grpc_socket", "--grpc-socket", "PATH", "Unix socket of the gRPC control plane", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.grpc_socket, get_socket_path(v[0]));
       return {};
     }},
    {"session_socket", "--session-socket", "PATH", "Unix socket of the session channel", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.session_socket, get_socket_path(v[0]));
       return {};
     }},
    {"socket_mode", "--socket-mode", "MODE", "octal permissions of both sockets, e.g. 0660", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.socket_mode, get_mode(v[0]));
       return {};
     }},
    {"allowed_uids", "--allow-uid", "UID|USER", "a user that may connect (repeatable)", Shape::List,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       c.daemon.allowed_uids.clear();
       for (const Input& in : v) {
         ACCORD_ASSIGN_OR_RETURN(std::uint32_t id, get_id(in, IdKind::User));
         c.daemon.allowed_uids.push_back(id);
       }
       return {};
     }},
    {"allowed_gids", "--allow-gid", "GID|GROUP", "members of this group may connect (repeatable)", Shape::List,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       c.daemon.allowed_gids.clear();
       for (const Input& in : v) {
         ACCORD_ASSIGN_OR_RETURN(std::uint32_t id, get_id(in, IdKind::Group));
         c.daemon.allowed_gids.push_back(id);
       }
       return {};
     }},
    {"allow_all_users", "--allow-all-users", "", "any uid may connect (single-user boxes)", Shape::Switch,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.allow_all_users, get_bool(v[0]));
       return {};
     }},
    {"workers", "--workers", "N", "engine worker threads", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.worker_threads, get_count(v[0], 1, kMaxWorkers));
       return {};
     }},
    {"ring_pollers", "--ring-pollers", "N",
     "the most threads serving the sessions' submission rings (as many serve as the work keeps busy), or auto "
     "(at least one per 127 sessions)",
     Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       const Input& in = v[0];
       const auto* s = in.node ? in.node->as_string() : nullptr;
       if ((s && s->get() == "auto") || (!in.node && in.text == "auto")) {
         c.daemon.ring_poller_threads = 0;
         return {};
       }
       ACCORD_SET(c.daemon.ring_poller_threads, get_count(in, 1, kMaxRingPollers));
       return {};
     }},
    {"max_sessions", "--max-sessions", "N", "concurrent client sessions", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.max_sessions, get_count(v[0], 1, kMaxSessions));
       return {};
     }},
    {"max_objects", "--max-objects", "N", "live object handles per session", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.max_objects_per_session, get_count(v[0], 1, kMaxObjects));
       return {};
     }},
    {"max_submissions", "--max-submissions", "N", "pending submissions per session", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.session_limits.max_submissions, get_count(v[0], 1, kMaxSubmissions));
       return {};
     }},
    {"graph_slots", "--graph-slots", "N", "submission slots per prepared graph", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.session_limits.graph_slots, get_count(v[0], 1, kMaxGraphSlots));
       return {};
     }},
    {"memory_budget", "--memory-budget", "BYTES", "live allocation bytes per session (K/M/G suffix, or unlimited)",
     Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       const Input& in = v[0];
       const auto* s = in.node ? in.node->as_string() : nullptr;
       if ((s && s->get() == "unlimited") || (!in.node && in.text == "unlimited")) {
         c.daemon.session_limits.memory_budget.reset();
         return {};
       }
       ACCORD_SET(c.daemon.session_limits.memory_budget,
                  get_bytes_in(in, 1, std::numeric_limits<std::int64_t>::max()));
       return {};
     }},
    {"max_message_bytes", "--max-message-bytes", "BYTES", "largest gRPC request accepted (K/M/G suffix)",
     Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.max_message_bytes, get_bytes_in(v[0], kMinMessageBytes, kMaxMessageBytes));
       return {};
     }},
    {"kernel_policy", "--kernel-policy", "POLICY", "client-modules or catalog", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_ASSIGN_OR_RETURN(std::string s, get_string(v[0]));
       if (s == to_string(KernelPolicy::ClientModules)) c.daemon.kernel_policy = KernelPolicy::ClientModules;
       else if (s == to_string(KernelPolicy::Catalog)) c.daemon.kernel_policy = KernelPolicy::Catalog;
       else return invalid(v[0], in_quotes(s) + " is not client-modules or catalog");
       return {};
     }},
    {"plugin_paths", "--plugin-path", "PATH", "an allowed host-kernel plugin .so (repeatable)", Shape::List,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       c.daemon.plugin_paths.clear();
       for (const Input& in : v) {
         ACCORD_ASSIGN_OR_RETURN(std::string path, get_absolute_path(in));
         c.daemon.plugin_paths.push_back(std::move(path));
       }
       return {};
     }},
    {"devices", "--devices", "auto|NAME,...", "device backends to open: auto, or names such as host,cuda",
     Shape::Names,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       std::vector<std::string>& backends = c.daemon.device_settings.backends;
       backends.clear();
       if (v.empty())
         return invalid_error("'devices': the list is empty; write \"auto\" for every backend that finds "
                              "hardware, or [\"host\"] for the host only");
       // A TOML value that is not an array arrives as the one input: "auto" or a name.
       if (v.size() == 1 && v[0].node && !v[0].node->is_string())
         return wrong_type(v[0], "\"auto\" or an array of backend names");
       for (const Input& in : v) {
         ACCORD_ASSIGN_OR_RETURN(std::string name, get_backend_name(in));
         if (name == "auto" && v.size() == 1) return {};
         if (name == "auto") return invalid(in, "'auto' cannot be combined with backend names");
         if (std::find(backends.begin(), backends.end(), name) != backends.end())
           return invalid(in, in_quotes(name) + " is listed twice");
         backends.push_back(std::move(name));
       }
       return {};
     }},
    {"npu_emulator", "--npu-emulator", "",
     "use the NPU emulator built with Accord as the Level Zero NPU driver (sets ZE_ENABLE_ALT_DRIVERS)",
     Shape::Switch,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_SET(c.daemon.npu_emulator, get_bool(v[0]));
       return {};
     }},
    {"gpu_executors", "--gpu-executors", "",
     "drive each GPU from its own executor process (accordd --gpu-executor N), restarted after a fault",
     Shape::Switch,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_ASSIGN_OR_RETURN(const bool on, get_bool(v[0]));
       c.daemon.device_settings.gpu_executor_binary = on ? std::string(kSelfExecutable) : std::string();
       return {};
     }},
    {"watchdog_seconds", "--watchdog-seconds", "SECONDS",
     "fail a region still running after this long and mark its device lost", Shape::Scalar,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       ACCORD_ASSIGN_OR_RETURN(std::size_t seconds, get_count(v[0], 1, kMaxWatchdogSeconds));
       c.daemon.watchdog_timeout = std::chrono::seconds(seconds);
       return {};
     }},
    {"priorities", "--priority-limit", "max_priority=N|uid.USER=N|gid.GROUP=N",
     "the highest session priority anyone, a user or a group may ask for (repeatable)", Shape::Table,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       service::PriorityPolicy policy;
       for (const Input& in : v) {
         ACCORD_ASSIGN_OR_RETURN(const std::int64_t value, get_integer(in));
         if (value < -kMaxPriority || value > kMaxPriority)
           return invalid(in, in_quotes(in.key) + " must be between " + std::to_string(-kMaxPriority) + " and " +
                                  std::to_string(kMaxPriority) + ", got " + std::to_string(value));
         const int limit = static_cast<int>(value);
         if (in.key == "max_priority") {
           policy.max_priority = limit;
           continue;
         }
         const bool uid = in.key.rfind("uid.", 0) == 0;
         const bool gid = in.key.rfind("gid.", 0) == 0;
         if ((!uid && !gid) || in.key.size() == 4)
           return invalid(in, in_quotes(in.key) + " is not max_priority, uid.USER or gid.GROUP");
         const Input who{nullptr, std::string_view(in.key).substr(4), in.where + " (" + in.key + ")", {}};
         ACCORD_ASSIGN_OR_RETURN(const std::uint32_t id, get_id(who, uid ? IdKind::User : IdKind::Group));
         (uid ? policy.uid_max : policy.gid_max)[id] = limit;
       }
       c.daemon.priorities = std::move(policy);
       return {};
     }},
    {"gpu_isolation", "--gpu-isolation", "uid.USER|gid.GROUP",
     "sessions of this user or group get a GPU executor of their own on every GPU, so another tenant's GPU "
     "fault never touches their work; GPU contexts then time-slice (repeatable)",
     Shape::List,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       c.daemon.isolated_uids.clear();
       c.daemon.isolated_gids.clear();
       for (const Input& in : v) {
         if (in.node && !in.node->is_string()) return wrong_type(in, "\"uid.USER\" or \"gid.GROUP\"");
         const std::string text = in.node ? in.node->as_string()->get() : std::string(in.text);
         const bool uid = text.rfind("uid.", 0) == 0;
         const bool gid = text.rfind("gid.", 0) == 0;
         if ((!uid && !gid) || text.size() == 4) return invalid(in, in_quotes(text) + " is not uid.USER or gid.GROUP");
         const Input who{nullptr, std::string_view(text).substr(4), in.where + " (" + text + ")", {}};
         ACCORD_ASSIGN_OR_RETURN(const std::uint32_t id, get_id(who, uid ? IdKind::User : IdKind::Group));
         (uid ? c.daemon.isolated_uids : c.daemon.isolated_gids).push_back(id);
       }
       return {};
     }},
    {"device_options", "--device-option", "BACKEND.KEY=VALUE", "a device backend option (repeatable)",
     Shape::Table,
     [](std::span<const Input> v, AccorddConfig& c) -> Status {
       auto& options = c.daemon.device_settings.options;
       options.clear();
       for (const Input& in : v) {
         const std::size_t dot = in.key.find('.');
         if (dot == 0 || dot == std::string::npos || dot + 1 == in.key.size())
           return invalid(in, in_quotes(in.key) + " is not BACKEND.KEY (such as null.devices)");
         ACCORD_ASSIGN_OR_RETURN(std::string value, get_option_value(in));
         options[in.key] = std::move(value);  // a repeated flag: the last one wins
       }
       return {};
     }},
};

#undef ACCORD_SET

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : kSettings)
    if (s.key == key) return &s;
  return nullptr;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean 'workers'?)" for a near miss, else a pointer to the list of keys.
std::string unknown_key_hint(std::string_view key) {
  for (const Setting& s : kSettings)
    if (edit_distance(key, s.key) <= 2) return " (did you mean " + in_quotes(s.key) + "?)";
  return " (see accordd --help; the sample accordd.toml documents every key)";
}

std::string at(const std::string& file, const toml::source_region& where) {
  return file + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
}

// The entries of a Shape::Table setting. Nested tables join their keys with '.', so
// `null.devices = "2"` (a dotted key, which TOML makes a nested table), `[device_options.null]`
// and `"null.devices" = "2"` all give the entry "null.devices".
void flatten_table(const toml::table& table, const std::string& prefix, const std::string& file,
                   std::string_view setting, std::vector<Input>& out) {
  for (const auto& [key, node] : table) {
    const std::string full = prefix + std::string(key.str());
    if (const toml::table* nested = node.as_table()) {
      flatten_table(*nested, full + ".", file, setting, out);
      continue;
    }
    out.push_back(Input{&node, {}, at(file, key.source()) + ": " + in_quotes(std::string(setting) + "." + full), full});
  }
}

Status apply_table(const toml::table& table, const std::string& file, AccorddConfig& config) {
  for (const auto& [key, node] : table) {
    const Setting* setting = find_setting(key.str());
    if (!setting)
      return invalid_error(at(file, key.source()) + ": unknown key " + in_quotes(key.str()) +
                           unknown_key_hint(key.str()));
    const std::string where = at(file, key.source()) + ": " + in_quotes(key.str());
    std::vector<Input> inputs;
    if (setting->shape == Shape::List || (setting->shape == Shape::Names && node.is_array())) {
      const toml::array* array = node.as_array();
      if (!array) return wrong_type(Input{&node, {}, where, {}}, "an array");
      for (std::size_t i = 0; i < array->size(); ++i)
        inputs.push_back(Input{array->get(i), {}, where + "[" + std::to_string(i) + "]", {}});
    } else if (setting->shape == Shape::Table) {
      const toml::table* entries = node.as_table();
      if (!entries) return wrong_type(Input{&node, {}, where, {}}, "a table");
      flatten_table(*entries, {}, file, key.str(), inputs);
    } else {
      inputs.push_back(Input{&node, {}, where, {}});
    }
    ACCORD_RETURN_IF_ERROR(setting->apply(inputs, config));
  }
  return {};
}

// Reads `path` into `out`. A missing file is Invalid only when `required`; the returned
// bool says whether a file was read.
Result<bool> read_file(const std::string& path, bool required, std::string& out) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    if (!required && (!ec || ec == std::errc::no_such_file_or_directory)) return false;
    return invalid_error("config file " + in_quotes(path) + " does not exist" +
                         (ec && ec != std::errc::no_such_file_or_directory ? " (" + ec.message() + ")" : ""));
  }
  if (std::filesystem::is_directory(status)) return invalid_error("config file " + in_quotes(path) + " is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_error("cannot read config file " + in_quotes(path) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return invalid_error("cannot read config file " + in_quotes(path));
  out = std::move(text).str();
  return true;
}

Status apply_file(const std::string& path, bool required, AccorddConfig& config) {
  std::string text;
  ACCORD_ASSIGN_OR_RETURN(bool found, read_file(path, required, text));
  if (!found) return {};
  config.config_file = path;
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return invalid_error(at(path, e.source()) + ": " + std::string(e.description()));
  }
  return apply_table(table, path, config);
}

// Checks that involve more than one setting.
Status check_combination(const AccorddConfig& config) {
  if (config.daemon.grpc_socket == config.daemon.session_socket)
    return invalid_error("grpc_socket and session_socket are both " + in_quotes(config.daemon.grpc_socket));
  const bool isolation = !config.daemon.isolated_uids.empty() || !config.daemon.isolated_gids.empty();
  if (isolation && config.daemon.device_settings.gpu_executor_binary.empty())
    return invalid_error("gpu_isolation gives sessions GPU executors of their own, so it needs gpu_executors = true");
  return {};
}

}  // namespace

Result<std::uint64_t> parse_byte_size(std::string_view text, std::string_view what) {
  std::string_view digits = text;
  unsigned shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: break;
    }
    if (shift) digits.remove_suffix(1);
  }
  std::uint64_t value = 0;
  if (!parse_whole(digits, value)) {
    return invalid_error(std::string(what) + ": " + in_quotes(text) +
                         " is not a byte count (digits with an optional K, M or G suffix)");
  }
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    return invalid_error(std::string(what) + ": " + in_quotes(text) + " is too large");
  return value << shift;
}

Result<AccorddConfig> load_config(int argc, const char* const* argv, std::string_view default_config_path) {
  AccorddConfig config;
  // accordd's default: GPUs in executor processes (gpu_executors = true).
  config.daemon.device_settings.gpu_executor_binary = std::string(kSelfExecutable);
  CLI::App app("accordd coordinates GPU and NPU work for every process on this box.\n"
               "Flags override the config file.",
               "accordd");
  std::string config_path(default_config_path);
  // std::map keeps the addresses CLI11 writes through stable.
  std::map<std::string_view, std::string> scalars;
  std::map<std::string_view, std::vector<std::string>> lists;  // List, Names and Table
  std::map<std::string_view, bool> switches;
  std::vector<std::pair<const Setting*, const CLI::Option*>> flag_options;
  try {
    app.set_version_flag("--version", std::string(version_string()));
    const CLI::Option* config_option =
        app.add_option("--config", config_path,
                       "TOML config file (default " + std::string(default_config_path) +
                           "; a missing default file is fine)")
            ->type_name("PATH");
    app.add_flag("--check-config", config.check_config,
                 "parse and validate the configuration, print it as TOML, exit 0 (valid) or 2");
    for (const Setting& s : kSettings) {
      const std::string flag(s.flag);
      const std::string help(s.help);
      CLI::Option* option = nullptr;
      switch (s.shape) {
        case Shape::Scalar:
          option = app.add_option(flag, scalars[s.key], help)
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
          break;
        case Shape::List:
        case Shape::Names:
          option = app.add_option(flag, lists[s.key], help);
          // "--allow-uid 1000,alice"; not for paths, which may contain commas.
          if (s.key != "plugin_paths") option->delimiter(',');
          break;
        case Shape::Table:
          // "--device-option null.devices=2"; values may contain commas.
          option = app.add_option(flag, lists[s.key], help);
          break;
        case Shape::Switch:
          option = app.add_flag(flag, switches[s.key], help);
          break;
      }
      if (!s.type_name.empty()) option->type_name(std::string(s.type_name));
      flag_options.emplace_back(&s, option);
    }
    app.footer("Every setting is also a key of the config file; see " + std::string(kDefaultConfigPath) +
               " or deploy/accordd.toml.");

    app.parse(argc, argv);

    // The file first, then the flags over it.
    ACCORD_RETURN_IF_ERROR(apply_file(config_path, config_option->count() > 0, config));
    for (const auto& [setting, option] : flag_options) {
      if (option->count() == 0) continue;
      std::vector<Input> inputs;
      const std::string where(setting->flag);
      switch (setting->shape) {
        case Shape::Scalar:
          inputs.push_back(Input{nullptr, scalars[setting->key], where, {}});
          break;
        case Shape::List:
        case Shape::Names:
          for (const std::string& value : lists[setting->key]) inputs.push_back(Input{nullptr, value, where, {}});
          break;
        case Shape::Table:
          for (const std::string& entry : lists[setting->key]) {
            const std::size_t eq = entry.find('=');
            if (eq == std::string::npos)
              return invalid_error(where + ": " + in_quotes(entry) + " is not BACKEND.KEY=VALUE");
            inputs.push_back(Input{nullptr, std::string_view(entry).substr(eq + 1), where, entry.substr(0, eq)});
          }
          break;
        case Shape::Switch:
          inputs.push_back(Input{nullptr, switches[setting->key] ? "true" : "false", where, {}});
          break;
      }
      ACCORD_RETURN_IF_ERROR(setting->apply(inputs, config));
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      std::ostringstream out, err;
      app.exit(e, out, err);
      config.print_and_exit = out.str();
      return config;
    }
    return invalid_error(std::string("command line: ") + e.what());
  } catch (const std::exception& e) {
    // CLI::ConstructionError (a bug in the table above) or std::bad_alloc.
    return internal_error(std::string("parsing the configuration: ") + e.what());
  }
  ACCORD_RETURN_IF_ERROR(check_combination(config));
  return config;
}

std::string_view version_string() noexcept { return "accordd " ACCORD_VERSION; }

}  // namespace accord::daemon_config
