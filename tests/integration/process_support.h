// Real processes for the integration suite: a child process with its output in files,
// accordd started as one (sockets in a fresh temporary directory), and the daemon-wide
// counters read with accordctl. Everything is bounded by timeouts, and every child is
// killed and reaped by its owner's destructor, so a failing test leaves no process
// behind. Not thread-safe: one test thread drives these.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accord::integration {

using namespace std::chrono_literals;

// A fresh directory under /tmp (socket paths must fit sockaddr_un, so not $TMPDIR),
// removed with its contents on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program's path (no PATH search)
  std::string stdout_path;        // the child's stdout, truncated; required
  std::string stderr_path;        // the child's stderr, truncated; required
  // Drop to this uid/gid (supplementary groups cleared) before exec; needs root.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
};

// How a child ended: exited with `code`, or was killed by `signal`.
struct ExitStatus {
  bool exited = false;
  int code = -1;
  int signal = 0;
  bool success() const noexcept { return exited && code == 0; }
  std::string describe() const;
};

// One child process. fork + exec; the child dies with the test process
// (PR_SET_PDEATHSIG), and the destructor SIGKILLs and reaps it if it still runs.
class Child {
 public:
  explicit Child(SpawnOptions options);
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const noexcept { return pid_; }
  bool running();                       // reaps it if it has ended
  void signal(int sig) const;           // no-op once reaped
  // Waits until it ends; empty on timeout (the child keeps running).
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Waits; on timeout SIGKILLs it and returns the status of that (signal 9).
  ExitStatus wait_or_kill(std::chrono::milliseconds timeout);
  std::optional<ExitStatus> status() const noexcept { return status_; }

  std::string out() const;  // everything it wrote to stdout so far
  std::string err() const;
  // Waits until its stdout holds `text`; false on timeout or when it ended first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);
  // "pid N (argv...) <status>\n--- stdout ---\n...\n--- stderr ---\n..." for failures.
  std::string report();

 private:
  SpawnOptions options_;
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

// Runs a program to completion (bounded by `timeout`, then SIGKILLed); output into
// files in `dir` named after `tag`.
struct RunResult {
  pid_t pid = -1;
  ExitStatus status;
  std::string out;
  std::string err;
  std::string report;  // Child::report() of the run
};
RunResult run_program(const std::vector<std::string>& argv, const TempDir& dir, const std::string& tag,
                      std::chrono::milliseconds timeout, std::optional<uid_t> uid = std::nullopt,
                      std::optional<gid_t> gid = std::nullopt);

struct DaemonOptions {
  std::vector<std::string> extra_args;  // e.g. {"--allow-uid", "65534"}
  bool allow_all_users = false;
  std::optional<unsigned> socket_mode;  // --socket-mode, octal; default: the daemon's
  unsigned dir_mode = 0700;             // the socket directory's mode
};

// accordd (ACCORD_INTEGRATION_ACCORDD) as a child, with both sockets in a fresh
// temporary directory, an empty config file (so /etc/accord/accordd.toml never applies)
// and its stderr in a file. The constructor waits until both sockets accept and throws
// std::runtime_error naming the reason (with accordd's stderr) when it exits early or
// does not become ready in time.
class DaemonProcess {
 public:
  explicit DaemonProcess(DaemonOptions options = {});
  // SIGKILLs accordd if stop() was not called.
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  const TempDir& dir() const noexcept { return dir_; }
  std::string grpc_socket() const { return dir_.file("accord.sock"); }
  std::string session_socket() const { return dir_.file("session.sock"); }
  bool running() { return child_.running(); }
  std::string stderr_text() const { return child_.err(); }

  // SIGTERM, then waits (bounded) for the drain; returns how it ended (SIGKILLed on
  // timeout). A clean stop is exit status 0.
  ExitStatus stop(std::chrono::milliseconds timeout = 30s);
  std::string report() { return child_.report(); }

 private:
  TempDir dir_;
  Child child_;
};

// Daemon-wide counters, read with `accordctl --json stats` (a session of its own that
// allocates and submits nothing).
struct DaemonCounters {
  std::uint64_t allocations = 0;
  std::uint64_t submissions = 0;
  std::uint64_t completions = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t ring_pollers_serving = 0;  // accordd's ring pollers holding rings now
  std::uint64_t ring_pollers_most = 0;     // and the most that may (--ring-pollers)
};
// Throws std::runtime_error (with accordctl's output) when accordctl fails.
DaemonCounters read_counters(const DaemonProcess& daemon);
// One row of `accordctl --json sessions` (which opens no session of its own).
struct SessionRow {
  std::uint64_t id = 0;
  std::int64_t pid = 0;
  std::uint32_t uid = 0;
  std::string label;
  std::uint64_t buffers = 0;
  std::uint64_t pending = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t submissions = 0;
  std::uint64_t completions = 0;
};
std::vector<SessionRow> list_sessions(const DaemonProcess& daemon);
// One entry of `accordctl --json devices`: a device (present or lost) or an absent
// backend (id empty).
struct DeviceRow {
  std::string id;  // "host", "gpu:0"; empty for an absent backend
  std::string backend;
  std::string name;
  std::string state;  // "present", "lost" or "absent"
  std::string reason;
};
std::vector<DeviceRow> list_devices(const DaemonProcess& daemon);

void sleep_ms(int ms);
// Creates or truncates `path` with `text`; throws std::runtime_error on failure.
void write_file(const std::string& path, const std::string& text);

// Polls `predicate` every 20 ms until it holds or `timeout` passes; returns its last value.
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    sleep_ms(20);
  }
}

// Paths baked in by CMake.
std::string accordd_path();
std::string accordctl_path();
std::string client_worker_path();

}  // namespace accord::integration
