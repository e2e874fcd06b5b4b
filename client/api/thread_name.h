// Names the calling thread for the kernel (/proc/PID/task/TID/comm, `top -H`, gdb, and the
// benchmarks' per-thread CPU tables), so that an operator can tell accordd's ring pollers,
// engine workers and a GPU executor's consumer apart.
#pragma once

namespace accord {

// Sets the calling thread's name to `name`, cut to the kernel's 15 characters. Best
// effort: a failure changes nothing else. Thread-safe (names only the caller).
void name_this_thread(const char* name) noexcept;

}  // namespace accord
