// Sleeping on a 32-bit word until another thread changes it: the one primitive that
// the engine's completion and lease waits and the shared-memory ring's doorbells share.
// Linux futexes; works across processes when the word lives in shared memory.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace accord {

// Blocks while `word` == `expected`, at most `timeout` (negative: no limit). Returns
// false only on timeout; spurious wakeups return true, so callers re-check.
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) noexcept;
// Wakes every thread blocked on `word`.
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept;

}  // namespace accord
