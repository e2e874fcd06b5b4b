// The GPU executor process (ARCHITECTURE.md, "GPU executors"): `accordd --gpu-executor
// N --executor-fd FD` opens one GPU through the named backend of a catalog and serves it
// to the accordd that spawned it, over the socket it inherited and the shared-memory
// channel accordd passes first. It exits when accordd hangs up or asks it to, and after
// it reports its device lost. Thread-safety: run_gpu_executor owns the process.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "accord/status.h"
#include "daemon/devices/backend_catalog.h"

namespace accord::executor {

struct ExecutorArgs {
  int ordinal = 0;           // --gpu-executor N
  int fd = -1;               // --executor-fd FD: the inherited SOCK_SEQPACKET socket
  std::string backend = "cuda";  // --executor-backend NAME
  std::map<std::string, std::string> options;  // --device-option BACKEND.KEY=VALUE (repeatable)
};

// Exit codes of an executor.
inline constexpr int kExecutorExitOk = 0;          // accordd hung up or asked it to exit
inline constexpr int kExecutorExitBadArgs = 2;     // bad flags or no usable channel
inline constexpr int kExecutorExitNoBackend = 3;   // the backend's factory failed (said in the hello)
inline constexpr int kExecutorExitLost = 4;        // the device was lost (said in a "lost" message)

// The executor's flags when `argv` asks for executor mode (it holds --gpu-executor),
// else an empty optional. Invalid naming the flag at fault for anything else.
Result<std::optional<ExecutorArgs>> parse_executor_args(int argc, const char* const* argv);

// Runs the executor until accordd hangs up or asks it to exit; returns the exit code.
// Sets PR_SET_PDEATHSIG (SIGKILL), so it never outlives accordd. The backend is opened
// with "<backend>.ordinal" = N, so that it creates no context on other GPUs.
int run_gpu_executor(const devices::BackendCatalog& catalog, ExecutorArgs args);

}  // namespace accord::executor
