#include "client/api/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace accord {
namespace {

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout) {
  // std::atomic<uint32_t> is layout-compatible with uint32_t on every target we build;
  // the kernel only needs its address.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

}  // namespace

bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept {
  // Not FUTEX_PRIVATE: the ring doorbells of the daemon live in memory shared between
  // processes, and the private variant would never see the other side's wake.
  if (timeout.count() < 0) {
    futex(word, FUTEX_WAIT, expected, nullptr);
    return true;
  }
  timespec ts{static_cast<time_t>(timeout.count() / 1'000'000'000),
              static_cast<long>(timeout.count() % 1'000'000'000)};
  if (futex(word, FUTEX_WAIT, expected, &ts) == -1 && errno == ETIMEDOUT) return false;
  return true;
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  futex(word, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace accord
