// The settings, in the order of deploy/accordd.toml: for each, how its value is read
// (config_input_impl.h) and where it goes in AccorddConfig.
#include "daemon/config/config_settings_impl.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

namespace accord::daemon_config::detail {
namespace {

using service::KernelPolicy;

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

}  // namespace

std::span<const Setting> settings() noexcept { return kSettings; }

const Setting* find_setting(std::string_view key) noexcept {
  for (const Setting& s : kSettings)
    if (s.key == key) return &s;
  return nullptr;
}

std::string unknown_key_hint(std::string_view key) {
  for (const Setting& s : kSettings)
    if (edit_distance(key, s.key) <= 2) return " (did you mean " + in_quotes(s.key) + "?)";
  return " (see accordd --help; the sample accordd.toml documents every key)";
}

}  // namespace accord::daemon_config::detail
