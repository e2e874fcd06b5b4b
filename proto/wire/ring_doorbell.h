// Doorbells of the ring (ring_layout.h): how a producer wakes a consumer that sleeps,
// and how a consumer spins for a bounded time before it sleeps. Futex words in shared
// memory, so they work across processes. Thread-safe: any number of ringers and waiters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "client/api/futex.h"
#include "proto/wire/ring_layout.h"

namespace accord::wire {

// After publishing: bumps the sequence and wakes sleepers, if any are counted. No system
// call when nobody sleeps.
inline void ring_doorbell(RingDoorbell& bell) noexcept {
  // An RMW, not a plain load: RMWs on `sleepers` are totally ordered, so either it sees
  // a waiter's count, or that waiter's count (acquire) comes after it and the waiter's
  // re-check sees the caller's publish (the Dekker pattern, without a fence, which
  // ThreadSanitizer cannot model).
  if (bell.sleepers.fetch_add(0, std::memory_order_acq_rel) == 0) return;
  bell.sequence.fetch_add(1, std::memory_order_release);
  futex_wake_all(bell.sequence);
}

// Spins up to `spin` for `ready()`, then sleeps on `bell` until `ready()` or `timeout`
// (negative: no limit). Returns ready() at the end.
template <class Ready>
bool wait_doorbell(RingDoorbell& bell, std::chrono::nanoseconds spin, std::chrono::nanoseconds timeout,
                   Ready ready) noexcept {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto spin_until = start + spin;
  while (!ready()) {
    if (Clock::now() < spin_until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    const std::uint32_t seen = bell.sequence.load(std::memory_order_acquire);
    bell.sleepers.fetch_add(1, std::memory_order_acq_rel);  // then re-check: see ring_doorbell
    bool woke = true;
    if (!ready()) {
      if (timeout.count() < 0) {
        futex_wait(bell.sequence, seen);
      } else {
        const auto left = timeout - (Clock::now() - start);
        woke = left.count() > 0 &&
               futex_wait(bell.sequence, seen, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
      }
    }
    bell.sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (!woke) return ready();
  }
  return true;
}

}  // namespace accord::wire
