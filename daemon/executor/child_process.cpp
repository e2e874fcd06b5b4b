// posix_spawn rather than fork: accordd is multithreaded, and posix_spawn (vfork + exec
// in glibc) runs no user code in the child, so no lock held by another thread can be
// inherited in a locked state.
#include "daemon/executor/child_process.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace accord::executor {
namespace {

int pidfd_open(pid_t pid) noexcept {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  static_cast<void>(pid);
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = ::strsignal(signal);
    return "was killed by signal " + std::to_string(signal) + " (" + (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, int inherited_fd) {
  if (argv.empty()) return invalid_error("executor: no binary to spawn");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 onto itself clears FD_CLOEXEC in the child (glibc >= 2.29, POSIX 2024).
  if (inherited_fd >= 0) posix_spawn_file_actions_adddup2(&actions, inherited_fd, inherited_fd);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The child starts with default signal dispositions and an empty mask: accordd blocks
  // SIGTERM and friends for its sigwait thread, which the executor must not inherit.
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) {
    std::string message = "executor: spawning '" + argv[0] + "': " + std::strerror(err);
    if (err == EAGAIN || err == ENOMEM) return busy_error(std::move(message));
    return invalid_error(std::move(message));
  }
  ChildProcess child;
  child.pid_ = pid;
  child.pidfd_ = UniqueFd(pidfd_open(pid));
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this == &other) return *this;
  static_cast<void>(kill_and_reap());
  pid_ = std::exchange(other.pid_, -1);
  pidfd_ = std::move(other.pidfd_);
  exit_ = std::exchange(other.exit_, std::nullopt);
  return *this;
}

std::optional<std::string> ChildProcess::try_reap() noexcept {
  if (pid_ <= 0) return std::string();
  if (exit_) return exit_;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_ = describe_wait_status(status);
      return exit_;
    }
    if (r < 0 && errno == EINTR) continue;
    // ECHILD: someone else reaped it (a SIGCHLD set to SIG_IGN); it is gone all the same.
    if (r < 0) {
      exit_ = "exited (status unknown: " + std::string(std::strerror(errno)) + ")";
      return exit_;
    }
    return std::nullopt;
  }
}

std::string ChildProcess::stop(std::chrono::milliseconds limit) noexcept {
  if (pid_ <= 0) return {};
  if (auto ended = try_reap()) return *ended;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pidfd_) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      static_cast<void>(::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 1))));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (auto ended = try_reap()) return *ended;
  }
  static_cast<void>(::kill(pid_, SIGKILL));
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) {
      exit_ = describe_wait_status(status);
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    exit_ = "killed (status unknown)";
    break;
  }
  return *exit_;
}

}  // namespace accord::executor
