// ExecutorOptions: how accordd spawns and supervises the executor of one GPU, with
// in-class defaults and validate() (STYLE.md rule 3). Thread-safety: a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accord/status.h"

namespace accord::executor {

struct ExecutorOptions {
  // The executor binary: accordd itself ("/proc/self/exe"), run as
  //   BINARY [extra_args...] --gpu-executor N --executor-fd FD --executor-backend NAME
  //          [--device-option BACKEND.KEY=VALUE ...]
  std::string binary;
  std::vector<std::string> extra_args;
  // The backend the executor opens from its catalog ("cuda" in accordd).
  std::string backend = "cuda";
  int ordinal = 0;
  // "<backend>.<key>" options forwarded to the executor's factory (others are dropped).
  std::map<std::string, std::string> device_options;

  // A control request (allocate, load, lower, ...) not answered within this makes the
  // executor lost: it is killed and restarted.
  std::chrono::milliseconds request_timeout{30'000};
  // How long a new executor may take to open its GPU and say hello.
  std::chrono::milliseconds hello_timeout{30'000};
  // How long an executor asked to exit (shut_down) may take before SIGKILL.
  std::chrono::milliseconds exit_grace{2'000};
  // Restarts are immediate while fewer than `max_restarts` happened in the last
  // `restart_window`; beyond that each waits, doubling from `backoff_initial` up to
  // `backoff_max`, so a kernel that faults on every start cannot spin the daemon.
  // (60 a minute lets a GPU come back after every one of a fault every 2 s, while a
  // kernel that faults at once on every start is slowed to the backoff.)
  std::uint32_t max_restarts = 60;
  std::chrono::milliseconds restart_window{60'000};
  std::chrono::milliseconds backoff_initial{1'000};
  std::chrono::milliseconds backoff_max{60'000};
  // Keep one more executor started and idle beside the live one, so that after a loss
  // the GPU serves again as soon as the loss is handled, not after a process start (the
  // CUDA context of a new process takes about 0.6 s on an H200). It holds a context of
  // its own (GPU memory), which does no work until it takes over.
  bool standby = true;
  // The completion thread spins this long after the last completion before it sleeps
  // on the doorbell (and the executor's command consumer likewise).
  std::chrono::microseconds spin{50};

  Status validate() const {
    if (binary.empty()) return invalid_error("executor: no binary to run");
    if (backend.empty()) return invalid_error("executor: no backend named");
    if (ordinal < 0) return invalid_error("executor: ordinal " + std::to_string(ordinal) + " is negative");
    if (request_timeout.count() <= 0 || hello_timeout.count() <= 0 || restart_window.count() <= 0 ||
        backoff_initial.count() <= 0 || backoff_max < backoff_initial || exit_grace.count() < 0 ||
        spin.count() < 0)
      return invalid_error("executor: timeouts must be positive and backoff_max >= backoff_initial");
    return Status();
  }
};

}  // namespace accord::executor
