// ChildProcess: the one owner of a spawned executor process (STYLE.md rule 7): its pid,
// a pidfd that becomes readable when it exits (so the supervisor polls it beside the
// socket), and the duty to reap it. Destroying a running child kills and reaps it, so
// accordd never leaves a zombie or an orphaned executor. Not thread-safe: owned by the
// supervisor thread (or the opener before that thread starts).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "accord/status.h"
#include "client/api/unique_fd.h"

namespace accord::executor {

class ChildProcess {
 public:
  // posix_spawn of `argv[0]` with `argv`, inheriting `inherited_fd` (its close-on-exec
  // flag cleared in the child only) and stdin/stdout/stderr; every other descriptor of
  // accordd is close-on-exec. Busy when out of processes or memory; Invalid when the
  // binary cannot be run.
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv, int inherited_fd);

  ChildProcess() = default;
  ~ChildProcess() { static_cast<void>(kill_and_reap()); }
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  bool running() const noexcept { return pid_ > 0 && !exit_.has_value(); }
  // Readable once the child has exited; -1 when the kernel has no pidfd_open (then the
  // socket's hang-up is what tells).
  int pidfd() const noexcept { return pidfd_.get(); }

  // Reaps without blocking: how it ended ("exited with status 3", "was killed by signal 9
  // (Killed)"), or nothing while it runs.
  std::optional<std::string> try_reap() noexcept;
  // Waits up to `limit` for the child to exit by itself, then SIGKILLs it; reaps it.
  // Returns how it ended ("" when there was no child).
  std::string stop(std::chrono::milliseconds limit) noexcept;
  std::string kill_and_reap() noexcept { return stop(std::chrono::milliseconds(0)); }
  // How it ended, once reaped.
  const std::optional<std::string>& exit_description() const noexcept { return exit_; }

 private:
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  std::optional<std::string> exit_;
};

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace accord::executor
