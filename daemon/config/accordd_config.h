// accordd's configuration: command-line flags (CLI11) over a TOML file (toml++), merged
// into the service's DaemonConfig plus the few settings only main.cpp uses (log level,
// --check-config). STYLE.md rule 3: options are parsed here and in main.cpp only; the
// service receives a finished DaemonConfig. deploy/accordd.toml documents every key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accord/status.h"
#include "daemon/service/daemon.h"

namespace accord::daemon_config {

inline constexpr std::string_view kDefaultConfigPath = "/etc/accord/accordd.toml";

// What gpu_executors = true runs for each GPU: accordd itself, as the kernel knows it
// (an upgrade that replaces the file on disk does not mix versions).
inline constexpr std::string_view kSelfExecutable = "/proc/self/exe";

enum class LogLevel : std::uint8_t { Trace, Debug, Info, Warn, Error };

// Everything accordd needs to run, after defaults, then the file, then the flags.
struct AccorddConfig {
  service::DaemonConfig daemon;
  LogLevel log_level = LogLevel::Info;
  // The config file that was read; empty when the default file was absent.
  std::string config_file;
  // --check-config: print the effective config and exit instead of serving.
  bool check_config = false;
  // --help or --version: the text to print on stdout before exiting 0. Nothing else in
  // the config is meaningful when this is set.
  std::optional<std::string> print_and_exit;
};

// Parses `argv` (argv[0] is the program name), reads the file named by --config or,
// when --config is absent, `default_config_path` if that file exists, and applies the
// flags over the file's values. Lists given by flags (--allow-uid, --allow-gid,
// --plugin-path, --devices) replace the file's list rather than extending it, and
// --device-option entries replace the file's whole [device_options] table.
//
// Checks every value's type and range (positive counts, an octal socket mode, absolute
// paths that fit a sockaddr_un, known user and group names, well-formed backend names
// and BACKEND.KEY option keys) but does not call DaemonConfig::validate(), which lives
// in accord::service and also checks that the named backends are built; main.cpp does.
//
// Invalid, with a message naming the flag or the file, line and key at fault, for: an
// unknown flag or key, a value of the wrong type or out of range, a missing explicit
// --config file, an unreadable file or a TOML syntax error. Never throws. Thread-safe
// (it resolves user and group names with the reentrant getpwnam_r/getgrnam_r).
Result<AccorddConfig> load_config(int argc, const char* const* argv,
                                  std::string_view default_config_path = kDefaultConfigPath);

// The effective configuration as a TOML document that load_config reads back to the
// same values (used by --check-config). Every key is written, in the order of
// deploy/accordd.toml, ending with the [device_options] table.
std::string to_toml(const AccorddConfig& config);

// Parses a byte count: digits with an optional binary suffix K, M or G (case-insensitive,
// so "64M" is 64 MiB). Invalid naming `what` on a bad suffix, a missing number or
// overflow.
Result<std::uint64_t> parse_byte_size(std::string_view text, std::string_view what);

std::string_view to_string(LogLevel level) noexcept;
std::string_view to_string(service::KernelPolicy policy) noexcept;

// "accordd <project version>".
std::string_view version_string() noexcept;

}  // namespace accord::daemon_config
