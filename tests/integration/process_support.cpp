#include "tests/integration/process_support.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

extern char** environ;

namespace accord::integration {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

int open_output(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  return fd;
}

// The only output between fork and exec: async-signal-safe (no strerror, no malloc).
void child_fail(const char* what, int code) {
  const int saved = errno;
  char digits[16];
  int n = 0;
  for (int e = saved > 0 ? saved : 0; n == 0 || e > 0; e /= 10) digits[n++] = static_cast<char>('0' + e % 10);
  [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, what, std::strlen(what));
  w = ::write(STDERR_FILENO, " failed: errno ", 15);
  while (n > 0) w = ::write(STDERR_FILENO, &digits[--n], 1);
  w = ::write(STDERR_FILENO, "\n", 1);
  _exit(code);
}

// True if a client can connect to the Unix socket at `path` with `type`.
bool accepts(const std::string& path, int type) {
  const int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    ::close(fd);
    throw std::runtime_error("socket path too long: " + path);
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string accordd_path() { return ACCORD_INTEGRATION_ACCORDD; }
std::string accordctl_path() { return ACCORD_INTEGRATION_ACCORDCTL; }
std::string client_worker_path() { return ACCORD_INTEGRATION_CLIENT; }

// ---------------------------------------------------------------- TempDir

TempDir::TempDir(const std::string& prefix) {
  // Always /tmp: socket paths must fit sockaddr_un (108 bytes), and $TMPDIR may be long.
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

// ---------------------------------------------------------------- Child

std::string ExitStatus::describe() const {
  if (exited) return "exit status " + std::to_string(code);
  if (signal != 0) return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "still running";
}

Child::Child(SpawnOptions options) : options_(std::move(options)) {
  if (options_.argv.empty()) throw std::runtime_error("Child: empty argv");
  const int out_fd = open_output(options_.stdout_path);
  const int err_fd = open_output(options_.stderr_path);

  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& a : options_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The environment, less the variables that would redirect a client away from the
  // daemon under test.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("ACCORD_SOCKET=") || entry.starts_with("ACCORD_SESSION_SOCKET=")) continue;
    envp.push_back(*e);
  }
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const bool drop_gid = options_.gid.has_value();
  const bool drop_uid = options_.uid.has_value();
  const gid_t gid = options_.gid.value_or(0);
  const uid_t uid = options_.uid.value_or(0);

  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_fd);
    ::close(err_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    if (::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0) _exit(126);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (drop_gid) {
      if (::setgroups(0, nullptr) != 0) child_fail("setgroups", 126);
      if (::setgid(gid) != 0) child_fail("setgid", 126);
    }
    if (drop_uid && ::setuid(uid) != 0) child_fail("setuid", 126);
    // After the uid change, which clears the parent-death signal.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(125);
    ::execve(argv[0], argv.data(), envp.data());
    child_fail("exec", 127);
  }
  ::close(out_fd);
  ::close(err_fd);
  pid_ = pid;
}

Child::Child(Child&& other) noexcept
    : options_(std::move(other.options_)), pid_(std::exchange(other.pid_, -1)), status_(std::move(other.status_)) {}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int raw = 0;
    while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
    }
  }
}

bool Child::running() {
  if (pid_ <= 0 || status_) return false;
  int raw = 0;
  const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
  if (r == 0) return true;
  ExitStatus s;
  if (r == pid_) {
    if (WIFEXITED(raw)) {
      s.exited = true;
      s.code = WEXITSTATUS(raw);
    } else if (WIFSIGNALED(raw)) {
      s.signal = WTERMSIG(raw);
    }
  } else {
    s.exited = true;  // not ours to wait for any more (ECHILD); report it as lost
    s.code = -1;
  }
  status_ = s;
  return false;
}

void Child::signal(int sig) const {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<ExitStatus> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    sleep_ms(5);
  }
  return status_;
}

ExitStatus Child::wait_or_kill(std::chrono::milliseconds timeout) {
  if (auto s = wait_for(timeout)) return *s;
  signal(SIGKILL);
  if (auto s = wait_for(10s)) return *s;
  throw std::runtime_error("pid " + std::to_string(pid_) + " survived SIGKILL for 10 s");
}

std::string Child::out() const { return read_text(options_.stdout_path); }
std::string Child::err() const { return read_text(options_.stderr_path); }

bool Child::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (out().find(text) != std::string::npos) return true;
    if (!running() || std::chrono::steady_clock::now() >= deadline)
      return out().find(text) != std::string::npos;
    sleep_ms(5);
  }
}

std::string Child::report() {
  running();
  const std::string state = status_ ? status_->describe() : std::string("still running");
  return "pid " + std::to_string(pid_) + " (" + join(options_.argv) + "): " + state + "\n--- stdout ---\n" + out() +
         "--- stderr ---\n" + err() + "--------------";
}

RunResult run_program(const std::vector<std::string>& argv, const TempDir& dir, const std::string& tag,
                      std::chrono::milliseconds timeout, std::optional<uid_t> uid, std::optional<gid_t> gid) {
  SpawnOptions options;
  options.argv = argv;
  options.stdout_path = dir.file(tag + ".stdout");
  options.stderr_path = dir.file(tag + ".stderr");
  options.uid = uid;
  options.gid = gid;
  Child child(std::move(options));
  RunResult result;
  result.pid = child.pid();
  result.status = child.wait_or_kill(timeout);
  result.out = child.out();
  result.err = child.err();
  result.report = child.report();
  return result;
}

// ---------------------------------------------------------------- DaemonProcess

namespace {

SpawnOptions accordd_spawn_options(const TempDir& dir, const DaemonOptions& options) {
  if (::chmod(dir.path().c_str(), options.dir_mode) != 0)
    throw std::runtime_error("chmod " + dir.path() + ": " + std::strerror(errno));
  // An empty config file: the installed /etc/accord/accordd.toml must not apply here.
  write_file(dir.file("accordd.toml"), "# integration test: flags only\n");
  SpawnOptions spawn;
  spawn.argv = {accordd_path(),
                "--config", dir.file("accordd.toml"),
                "--grpc-socket", dir.file("accord.sock"),
                "--session-socket", dir.file("session.sock")};
  if (options.allow_all_users) spawn.argv.push_back("--allow-all-users");
  if (options.socket_mode) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", *options.socket_mode & 0777u);
    spawn.argv.insert(spawn.argv.end(), {"--socket-mode", mode});
  }
  spawn.argv.insert(spawn.argv.end(), options.extra_args.begin(), options.extra_args.end());
  spawn.stdout_path = dir.file("accordd.stdout");
  spawn.stderr_path = dir.file("accordd.stderr");
  return spawn;
}

}  // namespace

DaemonProcess::DaemonProcess(DaemonOptions options)
    : dir_("accord-int"), child_(accordd_spawn_options(dir_, options)) {
  // Generous: an ASan build starts slowly on a loaded machine.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    if (!child_.running())
      throw std::runtime_error("accordd exited before its sockets accepted connections: " + child_.report());
    if (accepts(grpc_socket(), SOCK_STREAM) && accepts(session_socket(), SOCK_SEQPACKET)) return;
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("accordd's sockets did not accept connections within 30 s: " + child_.report());
    sleep_ms(10);
  }
}

DaemonProcess::~DaemonProcess() = default;  // child_ SIGKILLs a daemon still running

ExitStatus DaemonProcess::stop(std::chrono::milliseconds timeout) {
  child_.signal(SIGTERM);
  return child_.wait_or_kill(timeout);
}

// ---------------------------------------------------------------- accordctl

namespace {

nlohmann::json accordctl_json(const DaemonProcess& daemon, const std::string& command) {
  RunResult r = run_program({accordctl_path(), "--socket", daemon.grpc_socket(), "--session-socket",
                             daemon.session_socket(), "--json", "--timeout", "10", command},
                            daemon.dir(), "accordctl-" + command, 20s);
  if (!r.status.success()) throw std::runtime_error("accordctl " + command + " failed: " + r.report);
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    throw std::runtime_error("accordctl " + command + " printed no JSON (" + e.what() + "): " + r.report);
  }
}

}  // namespace

DaemonCounters read_counters(const DaemonProcess& daemon) {
  const nlohmann::json json = accordctl_json(daemon, "stats");
  try {
    const nlohmann::json& d = json.at("daemon");
    DaemonCounters c;
    c.allocations = d.at("allocations").get<std::uint64_t>();
    c.submissions = d.at("submissions").get<std::uint64_t>();
    c.completions = d.at("completions").get<std::uint64_t>();
    c.live_bytes = d.at("live_bytes").get<std::uint64_t>();
    c.peak_bytes = d.at("peak_bytes").get<std::uint64_t>();
    c.ring_pollers_serving = json.at("ring_pollers").at("serving").get<std::uint64_t>();
    c.ring_pollers_most = json.at("ring_pollers").at("most").get<std::uint64_t>();
    return c;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("accordctl stats: unexpected JSON (") + e.what() + "): " + json.dump());
  }
}

std::vector<SessionRow> list_sessions(const DaemonProcess& daemon) {
  const nlohmann::json json = accordctl_json(daemon, "sessions");
  std::vector<SessionRow> rows;
  try {
    for (const nlohmann::json& s : json.at("sessions")) {
      SessionRow row;
      row.id = s.at("id").get<std::uint64_t>();
      row.pid = s.at("pid").get<std::int64_t>();
      row.uid = s.at("uid").get<std::uint32_t>();
      row.label = s.at("label").get<std::string>();
      row.buffers = s.at("buffers").get<std::uint64_t>();
      row.pending = s.at("pending").get<std::uint64_t>();
      row.live_bytes = s.at("live_bytes").get<std::uint64_t>();
      row.submissions = s.at("statistics").at("submissions").get<std::uint64_t>();
      row.completions = s.at("statistics").at("completions").get<std::uint64_t>();
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("accordctl sessions: unexpected JSON (") + e.what() + "): " + json.dump());
  }
  return rows;
}

std::vector<DeviceRow> list_devices(const DaemonProcess& daemon) {
  const nlohmann::json json = accordctl_json(daemon, "devices");
  std::vector<DeviceRow> rows;
  try {
    for (const nlohmann::json& d : json.at("devices")) {
      DeviceRow row;
      if (!d.at("id").is_null()) row.id = d.at("id").get<std::string>();
      row.backend = d.at("backend").get<std::string>();
      row.name = d.at("name").get<std::string>();
      row.state = d.at("state").get<std::string>();
      row.reason = d.at("reason").get<std::string>();
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("accordctl devices: unexpected JSON (") + e.what() + "): " + json.dump());
  }
  return rows;
}

}  // namespace accord::integration
