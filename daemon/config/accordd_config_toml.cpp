// to_toml(): the effective configuration as a TOML document that load_config reads back
// to the same AccorddConfig (accordd --check-config prints it), and the names of the
// enumerations it shares with the parser.
#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/config/accordd_config.h"

namespace accord::daemon_config {
namespace {

using service::KernelPolicy;

void write_string(std::ostream& out, std::string_view s) {
  out << '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out << '\\' << ch;
    } else if (c < 0x20 || c == 0x7f) {
      constexpr char kHex[] = "0123456789ABCDEF";
      out << "\\u00" << kHex[c >> 4] << kHex[c & 0xf];
    } else {
      out << ch;
    }
  }
  out << '"';
}

template <class T, class Write>
void write_array(std::ostream& out, const std::vector<T>& values, Write write) {
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out << ", ";
    write(values[i]);
  }
  out << ']';
}

}  // namespace

std::string to_toml(const AccorddConfig& config) {
  const service::DaemonConfig& d = config.daemon;
  std::ostringstream out;
  out << "# accordd effective configuration: defaults, then "
      << (config.config_file.empty() ? std::string("no config file") : config.config_file)
      << ", then flags.\n";
  const auto id_writer = [&out](std::uint32_t id) { out << id; };
  const auto string_writer = [&out](const std::string& s) { write_string(out, s); };
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", d.socket_mode & 07777u);

  out << "log_level = ";
  write_string(out, to_string(config.log_level));
  out << "\ngrpc_socket = ";
  write_string(out, d.grpc_socket);
  out << "\nsession_socket = ";
  write_string(out, d.session_socket);
  out << "\nsocket_mode = \"" << mode << "\"\nallowed_uids = ";
  write_array(out, d.allowed_uids, id_writer);
  out << "\nallowed_gids = ";
  write_array(out, d.allowed_gids, id_writer);
  out << "\nallow_all_users = " << (d.allow_all_users ? "true" : "false")
      << "\nworkers = " << d.worker_threads
      << "\nring_pollers = "
      << (d.ring_poller_threads == 0 ? std::string("\"auto\"") : std::to_string(d.ring_poller_threads))
      << "\nmax_sessions = " << d.max_sessions
      << "\nmax_objects = " << d.max_objects_per_session
      << "\nmax_submissions = " << d.session_limits.max_submissions
      << "\ngraph_slots = " << d.session_limits.graph_slots << "\nmemory_budget = ";
  if (d.session_limits.memory_budget) out << *d.session_limits.memory_budget;
  else out << "\"unlimited\"";
  out << "\nmax_message_bytes = " << d.max_message_bytes << "\nkernel_policy = ";
  write_string(out, to_string(d.kernel_policy));
  out << "\nplugin_paths = ";
  write_array(out, d.plugin_paths, string_writer);
  out << "\ndevices = ";
  if (d.device_settings.backends.empty()) write_string(out, "auto");
  else write_array(out, d.device_settings.backends, string_writer);
  out << "\nnpu_emulator = " << (d.npu_emulator ? "true" : "false");
  out << "\ngpu_executors = " << (d.device_settings.gpu_executor_binary.empty() ? "false" : "true");
  out << "\nwatchdog_seconds = "
      << std::chrono::duration_cast<std::chrono::seconds>(d.watchdog_timeout).count();
  // Numeric ids, which the file accepts as "uid.1000" as well as names.
  std::vector<std::string> isolation;
  for (std::uint32_t uid : d.isolated_uids) isolation.push_back("uid." + std::to_string(uid));
  for (std::uint32_t gid : d.isolated_gids) isolation.push_back("gid." + std::to_string(gid));
  out << "\ngpu_isolation = ";
  write_array(out, isolation, string_writer);
  // Tables end the document: every key after a header belongs to that table.
  out << "\n[priorities]\nmax_priority = " << d.priorities.max_priority << '\n';
  for (const auto& [uid, limit] : d.priorities.uid_max) out << "uid." << uid << " = " << limit << '\n';
  for (const auto& [gid, limit] : d.priorities.gid_max) out << "gid." << gid << " = " << limit << '\n';
  out << "[device_options]\n";
  for (const auto& [key, value] : d.device_settings.options) {
    write_string(out, key);
    out << " = ";
    write_string(out, value);
    out << '\n';
  }
  return std::move(out).str();
}

std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Trace: return "trace";
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "info";
}

std::string_view to_string(service::KernelPolicy policy) noexcept {
  switch (policy) {
    case KernelPolicy::ClientModules: return "client-modules";
    case KernelPolicy::Catalog: return "catalog";
  }
  return "client-modules";
}

}  // namespace accord::daemon_config
