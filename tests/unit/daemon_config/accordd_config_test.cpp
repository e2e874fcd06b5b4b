// accordd's configuration loader (daemon/config/accordd_config.cpp): defaults, the shipped
// sample file, flags over the file, and the Invalid messages for bad keys, types and
// values. Pure parsing: no daemon is started and no socket is created.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/config/accordd_config.h"

using accord::ErrorKind;
using accord::Result;
using accord::daemon_config::AccorddConfig;
using accord::daemon_config::LogLevel;
using accord::service::DaemonConfig;
using accord::service::KernelPolicy;
namespace config = accord::daemon_config;

namespace {

// A default path that never exists, so tests do not depend on the machine's /etc.
constexpr const char* kNoDefault = "/nonexistent/accord-test/accordd.toml";

Result<AccorddConfig> load(std::vector<std::string> args, const char* default_path = kNoDefault) {
  args.insert(args.begin(), "accordd");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return config::load_config(static_cast<int>(argv.size()), argv.data(), default_path);
}

// A config file in the temp directory, removed at scope exit.
class TempConfig {
 public:
  explicit TempConfig(const std::string& text) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("accordd_config_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".toml"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempConfig() { std::filesystem::remove(path_); }
  TempConfig(const TempConfig&) = delete;
  TempConfig& operator=(const TempConfig&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string message_of(const Result<AccorddConfig>& r) { return std::string(r.status().message()); }

// Loads `text` as the config file and expects Invalid whose message contains every one
// of `needles`.
void require_invalid_file(const std::string& text, std::initializer_list<std::string> needles) {
  TempConfig file(text);
  auto r = load({"--config", file.path()});
  INFO(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().kind() == ErrorKind::Invalid);
  for (const std::string& needle : needles) {
    INFO("message: " << message_of(r));
    CHECK(message_of(r).find(needle) != std::string::npos);
  }
}

void require_invalid_flags(std::vector<std::string> args, const std::string& needle) {
  auto r = load(args);
  INFO(args.front() << " " << (args.size() > 1 ? args[1] : ""));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().kind() == ErrorKind::Invalid);
  INFO("message: " << message_of(r));
  CHECK(message_of(r).find(needle) != std::string::npos);
}

// to_toml without its first line, which names the file the values came from.
std::string body(const AccorddConfig& c) {
  std::string text = config::to_toml(c);
  return text.substr(text.find('\n') + 1);
}

}  // namespace

TEST_CASE("with no file and no flags the config is the built-in defaults", "[daemon][config]") {
  auto r = load({});
  REQUIRE(r.ok());
  const DaemonConfig defaults;
  const DaemonConfig& d = r->daemon;
  CHECK(r->config_file.empty());
  CHECK_FALSE(r->check_config);
  CHECK_FALSE(r->print_and_exit.has_value());
  CHECK(r->log_level == LogLevel::Info);
  CHECK(d.grpc_socket == "/run/accord/accord.sock");
  CHECK(d.session_socket == "/run/accord/session.sock");
  CHECK(d.socket_mode == 0660u);
  CHECK(d.allowed_uids.empty());
  CHECK(d.allowed_gids.empty());
  CHECK_FALSE(d.allow_all_users);
  CHECK(d.worker_threads == defaults.worker_threads);
  CHECK(d.max_sessions == defaults.max_sessions);
  CHECK(d.max_objects_per_session == defaults.max_objects_per_session);
  CHECK(d.max_message_bytes == defaults.max_message_bytes);
  CHECK(d.session_limits.max_submissions == defaults.session_limits.max_submissions);
  CHECK(d.session_limits.graph_slots == defaults.session_limits.graph_slots);
  CHECK_FALSE(d.session_limits.memory_budget.has_value());
  CHECK(d.kernel_policy == KernelPolicy::ClientModules);
  CHECK(d.plugin_paths.empty());
  CHECK(d.device_settings.backends.empty());  // "auto"
  CHECK(d.device_settings.options.empty());
  CHECK(d.watchdog_timeout == std::chrono::seconds(60));
  CHECK_FALSE(d.npu_emulator);
  CHECK(d.device_settings.gpu_executor_binary == "/proc/self/exe");  // gpu_executors = true
}

TEST_CASE("the sample deploy/accordd.toml loads and states exactly the defaults", "[daemon][config]") {
  auto sample = load({"--config", ACCORD_SAMPLE_CONFIG});
  INFO(message_of(sample));
  REQUIRE(sample.ok());
  CHECK(sample->config_file == ACCORD_SAMPLE_CONFIG);
  auto defaults = load({});
  REQUIRE(defaults.ok());
  // Every key of the sample is set to its default, as the file's header promises.
  CHECK(body(*sample) == body(*defaults));

  // It is also found as the default path, without --config.
  auto as_default = load({}, ACCORD_SAMPLE_CONFIG);
  REQUIRE(as_default.ok());
  CHECK(as_default->config_file == ACCORD_SAMPLE_CONFIG);
}

TEST_CASE("the sample names every key that to_toml writes", "[daemon][config]") {
  std::ifstream in(ACCORD_SAMPLE_CONFIG);
  std::string sample((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto defaults = load({});
  REQUIRE(defaults.ok());
  std::istringstream lines(body(*defaults));
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    if (line.starts_with("[")) {  // a table's header: [device_options]
      CHECK(sample.find("\n" + line + "\n") != std::string::npos);
      continue;
    }
    const std::string key = line.substr(0, line.find(' '));
    CHECK(sample.find("\n" + key + " = ") != std::string::npos);
  }
}

TEST_CASE("flags override values from the file", "[daemon][config]") {
  TempConfig file(R"(
log_level = "debug"
workers = 3
allowed_uids = [1, 2]
memory_budget = "1G"
kernel_policy = "catalog"
socket_mode = 0o600
allow_all_users = true
plugin_paths = ["/opt/a.so"]
)");
  auto from_file = load({"--config", file.path()});
  REQUIRE(from_file.ok());
  CHECK(from_file->log_level == LogLevel::Debug);
  CHECK(from_file->daemon.worker_threads == 3);
  CHECK(from_file->daemon.allowed_uids == std::vector<std::uint32_t>{1, 2});
  CHECK(from_file->daemon.session_limits.memory_budget == std::uint64_t{1} << 30);
  CHECK(from_file->daemon.kernel_policy == KernelPolicy::Catalog);
  CHECK(from_file->daemon.socket_mode == 0600u);
  CHECK(from_file->daemon.allow_all_users);

  auto r = load({"--config", file.path(), "--workers", "5", "--allow-uid", "7", "--allow-uid", "8,9",
                 "--memory-budget", "unlimited", "--kernel-policy", "client-modules", "--socket-mode",
                 "0660", "--allow-all-users=false", "--plugin-path", "/opt/b.so", "--log-level", "warn",
                 "--workers", "6"});
  INFO(message_of(r));
  REQUIRE(r.ok());
  CHECK(r->log_level == LogLevel::Warn);
  CHECK(r->daemon.worker_threads == 6);  // the last of a repeated scalar flag wins
  CHECK(r->daemon.allowed_uids == std::vector<std::uint32_t>{7, 8, 9});  // replaced, not appended
  CHECK_FALSE(r->daemon.session_limits.memory_budget.has_value());
  CHECK(r->daemon.kernel_policy == KernelPolicy::ClientModules);
  CHECK(r->daemon.socket_mode == 0660u);
  CHECK_FALSE(r->daemon.allow_all_users);
  CHECK(r->daemon.plugin_paths == std::vector<std::string>{"/opt/b.so"});

  // Settings the flags leave alone keep the file's values.
  auto partial = load({"--config", file.path(), "--graph-slots", "8"});
  REQUIRE(partial.ok());
  CHECK(partial->daemon.session_limits.graph_slots == 8);
  CHECK(partial->daemon.worker_threads == 3);
  CHECK(partial->daemon.kernel_policy == KernelPolicy::Catalog);
}

TEST_CASE("every setting has a flag", "[daemon][config]") {
  auto r = load({"--grpc-socket", "/tmp/g.sock", "--session-socket", "/tmp/s.sock", "--socket-mode", "600",
                 "--allow-uid", "0", "--allow-gid", "0", "--allow-all-users", "--workers", "4",
                 "--max-submissions", "9", "--graph-slots", "3", "--memory-budget", "512k", "--max-objects",
                 "10", "--max-sessions", "11", "--max-message-bytes", "8M", "--kernel-policy", "catalog",
                 "--plugin-path", "/p/one.so", "--plugin-path", "/p/two.so", "--log-level", "trace",
                 "--devices", "host,null", "--watchdog-seconds", "9", "--device-option", "null.devices=3"});
  INFO(message_of(r));
  REQUIRE(r.ok());
  const DaemonConfig& d = r->daemon;
  CHECK(d.device_settings.backends == std::vector<std::string>{"host", "null"});
  CHECK(d.watchdog_timeout == std::chrono::seconds(9));
  CHECK(d.device_settings.options == std::map<std::string, std::string>{{"null.devices", "3"}});
  CHECK(d.grpc_socket == "/tmp/g.sock");
  CHECK(d.session_socket == "/tmp/s.sock");
  CHECK(d.socket_mode == 0600u);
  CHECK(d.allowed_uids == std::vector<std::uint32_t>{0});
  CHECK(d.allowed_gids == std::vector<std::uint32_t>{0});
  CHECK(d.allow_all_users);
  CHECK(d.worker_threads == 4);
  CHECK(d.session_limits.max_submissions == 9);
  CHECK(d.session_limits.graph_slots == 3);
  CHECK(d.session_limits.memory_budget == 512u * 1024u);
  CHECK(d.max_objects_per_session == 10);
  CHECK(d.max_sessions == 11);
  CHECK(d.max_message_bytes == 8u << 20);
  CHECK(d.kernel_policy == KernelPolicy::Catalog);
  CHECK(d.plugin_paths == std::vector<std::string>{"/p/one.so", "/p/two.so"});
  CHECK(r->log_level == LogLevel::Trace);
}

TEST_CASE("to_toml writes a file that loads back to the same config", "[daemon][config]") {
  auto r = load({"--grpc-socket", "/run/x/\"quoted\" \\ path.sock", "--allow-uid", "5", "--allow-gid", "6",
                 "--memory-budget", "3G", "--kernel-policy", "catalog", "--plugin-path", "/p/a.so",
                 "--socket-mode", "0640", "--log-level", "error", "--devices", "host,null",
                 "--watchdog-seconds", "7", "--device-option", "null.devices=2",
                 "--device-option", "cuda.note=a \"b\", c=d"});
  REQUIRE(r.ok());
  TempConfig file(config::to_toml(*r));
  auto again = load({"--config", file.path()});
  INFO(config::to_toml(*r) << message_of(again));
  REQUIRE(again.ok());
  CHECK(body(*again) == body(*r));
  CHECK(again->daemon.grpc_socket == "/run/x/\"quoted\" \\ path.sock");
  CHECK(again->daemon.device_settings.backends == std::vector<std::string>{"host", "null"});
  CHECK(again->daemon.watchdog_timeout == std::chrono::seconds(7));
  CHECK(again->daemon.device_settings.options ==
        std::map<std::string, std::string>{{"cuda.note", "a \"b\", c=d"}, {"null.devices", "2"}});
}

TEST_CASE("devices is auto or a list of backend names, from the file or --devices", "[daemon][config]") {
  TempConfig listed("devices = [\"host\", \"null\"]\n");
  auto from_file = load({"--config", listed.path()});
  INFO(message_of(from_file));
  REQUIRE(from_file.ok());
  CHECK(from_file->daemon.device_settings.backends == std::vector<std::string>{"host", "null"});
  // The flag replaces the file's list; "auto" clears it.
  auto flagged = load({"--config", listed.path(), "--devices", "null"});
  REQUIRE(flagged.ok());
  CHECK(flagged->daemon.device_settings.backends == std::vector<std::string>{"null"});
  auto automatic = load({"--config", listed.path(), "--devices", "auto"});
  REQUIRE(automatic.ok());
  CHECK(automatic->daemon.device_settings.backends.empty());
  TempConfig auto_file("devices = \"auto\"\n");
  auto from_auto = load({"--config", auto_file.path()});
  REQUIRE(from_auto.ok());
  CHECK(from_auto->daemon.device_settings.backends.empty());
  // Names are checked for form here; whether this build has them is DaemonConfig's
  // check (accordd --check-config runs both).
  auto unknown = load({"--devices", "host,doesnotexist"});
  REQUIRE(unknown.ok());
  CHECK(unknown->daemon.device_settings.backends == std::vector<std::string>{"host", "doesnotexist"});

  require_invalid_file("devices = []\n", {"'devices'", "auto"});
  require_invalid_file("devices = 3\n", {"'devices'", "integer"});
  require_invalid_file("devices = [\"host\", \"auto\"]\n", {"'devices'[1]", "auto"});
  require_invalid_file("devices = [\"host\", \"host\"]\n", {"'devices'[1]", "twice"});
  require_invalid_file("devices = [\"Host GPU\"]\n", {"'devices'[0]", "not a backend name"});
  require_invalid_flags({"--devices", "host,CUDA"}, "--devices");
}

TEST_CASE("watchdog_seconds sets the engine's watchdog", "[daemon][config]") {
  auto r = load({"--watchdog-seconds", "5"});
  REQUIRE(r.ok());
  CHECK(r->daemon.watchdog_timeout == std::chrono::seconds(5));
  require_invalid_file("watchdog_seconds = 0\n", {"'watchdog_seconds'", "between 1 and"});
  require_invalid_file("watchdog_seconds = \"60\"\n", {"'watchdog_seconds'", "integer"});
  require_invalid_flags({"--watchdog-seconds", "-1"}, "--watchdog-seconds");
}

TEST_CASE("ring_pollers sets the threads serving submission rings", "[daemon][config]") {
  auto flag = load({"--ring-pollers", "8"});
  REQUIRE(flag.ok());
  CHECK(flag->daemon.ring_poller_threads == 8);
  TempConfig file("ring_pollers = 4\n");
  auto from_file = load({"--config", file.path()});
  REQUIRE(from_file.ok());
  CHECK(from_file->daemon.ring_poller_threads == 4);
  auto automatic = load({"--config", file.path(), "--ring-pollers", "auto"});
  REQUIRE(automatic.ok());
  CHECK(automatic->daemon.ring_poller_threads == 0);
  require_invalid_file("ring_pollers = 0\n", {"'ring_pollers'", "between 1 and"});
  require_invalid_file("ring_pollers = \"many\"\n", {"'ring_pollers'"});
  require_invalid_file("ring_pollers = 65\n", {"'ring_pollers'", "between 1 and"});
  require_invalid_flags({"--ring-pollers", "x"}, "--ring-pollers");
}

TEST_CASE("npu_emulator is a switch, from the file or --npu-emulator", "[daemon][config]") {
  auto flag = load({"--npu-emulator"});
  REQUIRE(flag.ok());
  CHECK(flag->daemon.npu_emulator);
  CHECK(flag->daemon.device_settings.backends.empty());  // still "auto"
  auto off = load({"--npu-emulator=false"});
  REQUIRE(off.ok());
  CHECK_FALSE(off->daemon.npu_emulator);
  {
    TempConfig file("npu_emulator = true\ndevices = [\"host\"]\n");
    auto r = load({"--config", file.path()});
    INFO(message_of(r));
    REQUIRE(r.ok());
    CHECK(r->daemon.npu_emulator);
    // The service adds level_zero when it starts; the config keeps what was written.
    CHECK(r->daemon.device_settings.backends == std::vector<std::string>{"host"});
    CHECK(config::to_toml(*r).find("\nnpu_emulator = true\n") != std::string::npos);
    // The flag overrides the file.
    auto over = load({"--config", file.path(), "--npu-emulator=false"});
    REQUIRE(over.ok());
    CHECK_FALSE(over->daemon.npu_emulator);
  }
  require_invalid_file("npu_emulator = \"yes\"\n", {"'npu_emulator'", "boolean"});
  require_invalid_file("npu_emulater = true\n", {"'npu_emulater'", "did you mean 'npu_emulator'"});
}

TEST_CASE("gpu_isolation lists users and groups with GPU executors of their own", "[daemon][config]") {
  auto flags = load({"--gpu-isolation", "uid.0", "--gpu-isolation", "gid.0", "--gpu-isolation", "uid.1234"});
  INFO(message_of(flags));
  REQUIRE(flags.ok());
  CHECK(flags->daemon.isolated_uids == std::vector<std::uint32_t>{0, 1234});
  CHECK(flags->daemon.isolated_gids == std::vector<std::uint32_t>{0});
  CHECK(config::to_toml(*flags).find("\ngpu_isolation = [\"uid.0\", \"uid.1234\", \"gid.0\"]\n") != std::string::npos);
  {
    TempConfig file("gpu_isolation = [\"uid.root\"]\n");
    auto r = load({"--config", file.path()});
    INFO(message_of(r));
    REQUIRE(r.ok());
    CHECK(r->daemon.isolated_uids == std::vector<std::uint32_t>{0});
    CHECK(r->daemon.isolated_gids.empty());
  }
  require_invalid_file("gpu_isolation = [\"alice\"]\n", {"'gpu_isolation'", "uid.USER or gid.GROUP"});
  require_invalid_file("gpu_isolation = [3]\n", {"'gpu_isolation'"});
  require_invalid_flags({"--gpu-isolation", "gid.no-such-group-here"}, "no group named 'no-such-group-here'");
  require_invalid_flags({"--gpu-isolation", "uid.0", "--gpu-executors=false"}, "needs gpu_executors = true");
}

TEST_CASE("gpu_executors is a switch, on by default, from the file or --gpu-executors", "[daemon][config]") {
  auto defaults = load({});
  REQUIRE(defaults.ok());
  CHECK(defaults->daemon.device_settings.gpu_executor_binary == config::kSelfExecutable);
  CHECK(config::to_toml(*defaults).find("\ngpu_executors = true\n") != std::string::npos);
  auto off = load({"--gpu-executors=false"});
  REQUIRE(off.ok());
  CHECK(off->daemon.device_settings.gpu_executor_binary.empty());
  CHECK(config::to_toml(*off).find("\ngpu_executors = false\n") != std::string::npos);
  {
    TempConfig file("gpu_executors = false\n");
    auto r = load({"--config", file.path()});
    INFO(message_of(r));
    REQUIRE(r.ok());
    CHECK(r->daemon.device_settings.gpu_executor_binary.empty());
    auto over = load({"--config", file.path(), "--gpu-executors"});
    REQUIRE(over.ok());
    CHECK(over->daemon.device_settings.gpu_executor_binary == config::kSelfExecutable);
  }
  require_invalid_file("gpu_executors = \"yes\"\n", {"'gpu_executors'", "boolean"});
}

TEST_CASE("device_options is a table of backend.key strings, from the file or --device-option",
          "[daemon][config]") {
  // A quoted dotted key, a dotted key (a nested table in TOML) and a sub-table all give
  // "backend.key"; integers and booleans are taken as their text.
  TempConfig file(R"(workers = 2
[device_options]
"null.devices" = "2"
cuda.ordinals = 3
[device_options.level_zero]
emulate = true
)");
  auto r = load({"--config", file.path()});
  INFO(message_of(r));
  REQUIRE(r.ok());
  CHECK(r->daemon.worker_threads == 2);
  CHECK(r->daemon.device_settings.options == std::map<std::string, std::string>{{"cuda.ordinals", "3"},
                                                                                 {"level_zero.emulate", "true"},
                                                                                 {"null.devices", "2"}});
  // Flags replace the whole table; a repeated key keeps the last value.
  auto flagged = load({"--config", file.path(), "--device-option", "null.devices=4", "--device-option",
                       "null.devices=5"});
  REQUIRE(flagged.ok());
  CHECK(flagged->daemon.device_settings.options == std::map<std::string, std::string>{{"null.devices", "5"}});

  require_invalid_file("[device_options]\nnull = \"2\"\n", {"'device_options.null'", "BACKEND.KEY"});
  require_invalid_file("[device_options]\n\"null.devices\" = [2]\n", {"'device_options.null.devices'", "string"});
  require_invalid_file("device_options = 3\n", {"'device_options'", "table"});
  require_invalid_flags({"--device-option", "null.devices"}, "BACKEND.KEY=VALUE");
  require_invalid_flags({"--device-option", ".x=1"}, "BACKEND.KEY");
}

TEST_CASE("an unknown key is Invalid naming the key and its line", "[daemon][config]") {
  require_invalid_file("workers = 2\n\nworkerz = 3\n", {"'workerz'", ":3:", "unknown key", "did you mean 'workers'"});
  require_invalid_file("colour = \"blue\"\n", {"'colour'", "--help"});
  // A table is a key too: sections are not part of the format.
  require_invalid_file("[limits]\nmax_sessions = 4\n", {"'limits'", ":1:"});
}

TEST_CASE("a value of the wrong type is Invalid naming the key", "[daemon][config]") {
  require_invalid_file("log_level = \"info\"\nworkers = \"4\"\n", {"'workers'", ":2:", "integer", "string"});
  require_invalid_file("allowed_uids = 1000\n", {"'allowed_uids'", "array"});
  require_invalid_file("allowed_uids = [1000, 1.5]\n", {"'allowed_uids'[1]", "float"});
  require_invalid_file("allow_all_users = \"yes\"\n", {"'allow_all_users'", "boolean"});
  require_invalid_file("grpc_socket = 7\n", {"'grpc_socket'", "string"});
  require_invalid_file("memory_budget = true\n", {"'memory_budget'"});
  require_invalid_file("kernel_policy = [\"catalog\"]\n", {"'kernel_policy'", "array"});
}

TEST_CASE("out-of-range and malformed values are Invalid naming the setting", "[daemon][config]") {
  require_invalid_file("workers = 0\n", {"'workers'", "between 1 and"});
  require_invalid_file("max_sessions = -1\n", {"'max_sessions'"});
  require_invalid_file("graph_slots = 5000\n", {"'graph_slots'"});
  require_invalid_file("socket_mode = 660\n", {"'socket_mode'", "octal"});  // decimal 660
  require_invalid_file("socket_mode = \"0868\"\n", {"'socket_mode'"});
  require_invalid_file("memory_budget = 0\n", {"'memory_budget'"});
  require_invalid_file("max_message_bytes = 100\n", {"'max_message_bytes'"});
  require_invalid_file("allowed_uids = [-3]\n", {"'allowed_uids'[0]", "out of range"});
  require_invalid_file("allowed_uids = [4294967295]\n", {"'allowed_uids'[0]", "out of range"});
  require_invalid_file("grpc_socket = \"relative.sock\"\n", {"'grpc_socket'", "absolute"});
  require_invalid_file("session_socket = \"/" + std::string(120, 'x') + "\"\n", {"'session_socket'", "longer"});
  require_invalid_file("plugin_paths = [\"lib.so\"]\n", {"'plugin_paths'[0]", "absolute"});
  require_invalid_file("log_level = \"verbose\"\n", {"'log_level'", "verbose"});
  require_invalid_file("grpc_socket = \"/run/a.sock\"\nsession_socket = \"/run/a.sock\"\n",
                       {"grpc_socket", "session_socket"});
}

TEST_CASE("a TOML syntax error is Invalid with the file and line", "[daemon][config]") {
  TempConfig file("workers = 2\nmax_sessions = = 3\n");
  auto r = load({"--config", file.path()});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().kind() == ErrorKind::Invalid);
  CHECK(message_of(r).find(file.path() + ":2:") != std::string::npos);
}

TEST_CASE("bad flag values are Invalid naming the flag", "[daemon][config]") {
  require_invalid_flags({"--socket-mode", "0999"}, "--socket-mode");
  require_invalid_flags({"--socket-mode", "rw-rw----"}, "--socket-mode");
  require_invalid_flags({"--socket-mode", "01777"}, "--socket-mode");
  require_invalid_flags({"--kernel-policy", "anything"}, "--kernel-policy");
  require_invalid_flags({"--memory-budget", "4X"}, "--memory-budget");
  require_invalid_flags({"--memory-budget", "G"}, "--memory-budget");
  require_invalid_flags({"--memory-budget", "-4G"}, "--memory-budget");
  require_invalid_flags({"--memory-budget", "99999999999G"}, "too large");
  require_invalid_flags({"--workers", "two"}, "--workers");
  require_invalid_flags({"--workers", "0"}, "--workers");
  require_invalid_flags({"--allow-uid", "no-such-user-for-accord-tests"}, "no-such-user-for-accord-tests");
  require_invalid_flags({"--allow-gid", "no-such-group-for-accord-tests"}, "no-such-group-for-accord-tests");
  require_invalid_flags({"--log-level", "loud"}, "--log-level");
  require_invalid_flags({"--allow-all-users=maybe"}, "allow-all-users");
  require_invalid_flags({"--no-such-flag"}, "--no-such-flag");
}

TEST_CASE("byte sizes take binary K, M and G suffixes", "[daemon][config]") {
  CHECK(config::parse_byte_size("4096", "x").value() == 4096u);
  CHECK(config::parse_byte_size("512k", "x").value() == 512u << 10);
  CHECK(config::parse_byte_size("64M", "x").value() == 64u << 20);
  CHECK(config::parse_byte_size("8G", "x").value() == std::uint64_t{8} << 30);
  CHECK_FALSE(config::parse_byte_size("8T", "x").ok());
  CHECK_FALSE(config::parse_byte_size("8 G", "x").ok());
  CHECK_FALSE(config::parse_byte_size("", "x").ok());
  CHECK_FALSE(config::parse_byte_size("0x10", "x").ok());
}

TEST_CASE("users and groups may be given by name", "[daemon][config]") {
  // root (uid 0, group 0) exists on every Linux system.
  auto r = load({"--allow-uid", "root", "--allow-gid", "root"});
  INFO(message_of(r));
  REQUIRE(r.ok());
  CHECK(r->daemon.allowed_uids == std::vector<std::uint32_t>{0});
  CHECK(r->daemon.allowed_gids == std::vector<std::uint32_t>{0});
  TempConfig file("allowed_uids = [\"root\", 1000]\n");
  auto from_file = load({"--config", file.path()});
  REQUIRE(from_file.ok());
  CHECK(from_file->daemon.allowed_uids == std::vector<std::uint32_t>{0, 1000});
}

TEST_CASE("an explicit --config that does not exist is Invalid naming the path", "[daemon][config]") {
  const std::string missing = "/nonexistent/accord-test/explicit.toml";
  require_invalid_flags({"--config", missing}, missing);
  // The same path as the default is fine: the daemon runs on defaults.
  auto r = load({}, missing.c_str());
  REQUIRE(r.ok());
  CHECK(r->config_file.empty());
}

TEST_CASE("--help and --version ask to print and exit", "[daemon][config]") {
  auto help = load({"--help"});
  REQUIRE(help.ok());
  REQUIRE(help->print_and_exit.has_value());
  for (const char* flag : {"--config", "--check-config", "--memory-budget", "--allow-uid", "--kernel-policy",
                           "--devices", "--device-option", "--watchdog-seconds"}) {
    INFO(flag);
    CHECK(help->print_and_exit->find(flag) != std::string::npos);
  }
  auto version = load({"--version"});
  REQUIRE(version.ok());
  REQUIRE(version->print_and_exit.has_value());
  CHECK(version->print_and_exit->find(std::string(config::version_string())) != std::string::npos);

  auto check = load({"--check-config"});
  REQUIRE(check.ok());
  CHECK(check->check_config);
  CHECK_FALSE(check->print_and_exit.has_value());
}
