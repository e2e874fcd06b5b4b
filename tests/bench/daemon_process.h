// The real accordd as a child process of a benchmark (daemon_latency_bench, npu_graph_bench):
// spawned with an empty config file and both sockets in a fresh temporary directory, stopped
// with SIGTERM at the end or when the benchmark exits early, and the CPU-time clock of
// accordd. One DaemonProcess per benchmark process; owner thread only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proto/wire/session_channel.h"
#include "tests/bench/bench_util.h"

extern char** environ;

namespace accord::bench {

// Aborts the benchmark, naming `what`; the atexit hook below still stops accordd.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "benchmark setup failed: %s\n", what.c_str());
  std::exit(1);
}

class DaemonProcess;
// Every accordd running, stopped at exit, so a failed check never leaves one behind.
inline std::vector<DaemonProcess*> g_daemons;
inline pid_t g_daemon_owner = 0;  // the process that spawned them (not a forked child)
void stop_daemon_at_exit();

// The real accordd, started with an empty config file (so /etc/accord/accordd.toml cannot
// change what is measured), `extra_args` after the socket flags, and both sockets in a
// fresh temporary directory; its log goes to accordd.log there and is printed if it fails
// to start or exits non-zero. Stopped with SIGTERM, also when the benchmark exits early
// through fail() or check().
class DaemonProcess {
 public:
  explicit DaemonProcess(const std::string& binary, const std::vector<std::string>& extra_args = {}) {
    if (access(binary.c_str(), X_OK) != 0)
      fail("no executable accordd at '" + binary + "' (build it, or pass --accordd PATH)");
    char dir[] = "/tmp/accord-dbench-XXXXXX";
    if (!mkdtemp(dir)) fail(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = dir;
    if (g_daemons.empty() && g_daemon_owner == 0) std::atexit(stop_daemon_at_exit);
    g_daemons.push_back(this);
    g_daemon_owner = getpid();
    grpc_socket_ = dir_ + "/accord.sock";
    session_socket_ = dir_ + "/session.sock";  // beside the gRPC socket, where Runtime::connect looks
    config_ = dir_ + "/accordd.toml";
    log_ = dir_ + "/accordd.log";
    if (std::FILE* f = std::fopen(config_.c_str(), "w")) {
      std::fputs("# benchmark: built-in defaults\n", f);
      std::fclose(f);
    } else {
      fail("cannot write " + config_);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {binary, "--config", config_, "--grpc-socket", grpc_socket_,
                                     "--session-socket", session_socket_, "--log-level", "warn"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // ACCORD_BENCH_ACCORDD_NICE: accordd's nice value (and its executors', which inherit
    // it), as a unit's Nice= would set it: the spawning thread takes it for the spawn
    // (the child inherits the thread's), then goes back. Lowering it needs CAP_SYS_NICE.
    const int own_nice = getpriority(PRIO_PROCESS, 0);
    if (const char* nice = std::getenv("ACCORD_BENCH_ACCORDD_NICE"))
      if (setpriority(PRIO_PROCESS, 0, std::atoi(nice)) != 0)
        fail(std::string("ACCORD_BENCH_ACCORDD_NICE=") + nice + ": setpriority: " + std::strerror(errno));
    const int spawned = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    static_cast<void>(setpriority(PRIO_PROCESS, 0, own_nice));
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) fail("posix_spawn " + binary + ": " + std::strerror(spawned));
    wait_until_serving();
  }
  ~DaemonProcess() {
    stop();
    g_daemons.erase(std::remove(g_daemons.begin(), g_daemons.end(), this), g_daemons.end());
  }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  const std::string& grpc_socket() const noexcept { return grpc_socket_; }
  const std::string& session_socket() const noexcept { return session_socket_; }

  // SIGTERM, then up to 10 s for the drain before SIGKILL; prints accordd's log unless it
  // exited 0, and removes the directory. Returns the exit status (or -1). Idempotent.
  int stop() {
    int result = -1;
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 1000; ++i) {
        const pid_t got = waitpid(pid_, &status, WNOHANG);
        if (got == pid_) {
          result = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (result < 0) {
        std::fprintf(stderr, "accordd (pid %d) ignored SIGTERM for 10 s; killing it\n", static_cast<int>(pid_));
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
      if (result != 0) print_log();
      pid_ = 0;
    }
    if (!dir_.empty()) {
      for (const std::string& file : {grpc_socket_, session_socket_, config_, log_}) std::remove(file.c_str());
      rmdir(dir_.c_str());
      dir_.clear();
    }
    return result;
  }

 private:
  // Both sockets are listening once a plain connect to the gRPC one (created last) succeeds.
  void wait_until_serving() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        print_log();
        fail("accordd exited during startup");
      }
      if (wire::connect_unix(grpc_socket_, SOCK_STREAM).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    print_log();
    fail("accordd did not listen on " + grpc_socket_ + " within 10 s");
  }
  void print_log() const {
    std::fprintf(stderr, "--- %s\n", log_.c_str());
    if (std::FILE* f = std::fopen(log_.c_str(), "r")) {
      char line[512];
      while (std::fgets(line, sizeof(line), f)) std::fputs(line, stderr);
      std::fclose(f);
    }
  }

  pid_t pid_ = 0;
  std::string dir_, grpc_socket_, session_socket_, config_, log_;
};

inline void stop_daemon_at_exit() {
  if (getpid() != g_daemon_owner) return;
  for (DaemonProcess* daemon : g_daemons) daemon->stop();
}

// The CPU-time clock of another process (accordd), readable on Linux; nullopt when not.
inline std::optional<clockid_t> cpu_clock_of(pid_t pid) {
  clockid_t clock{};
  if (clock_getcpuclockid(pid, &clock) != 0 || process_cpu_ns(clock) < 0) return std::nullopt;
  return clock;
}

}  // namespace accord::bench
