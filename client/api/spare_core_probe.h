// SpareCoreProbe: whether this machine has a core to spare, so that a thread waiting for
// another (a client for accordd's ring poller, a GPU executor's consumer for accordd's
// launches) may spin on it. Spinning answers sooner only while the thread it waits for
// has a core of its own; with every core taken, the spinner is what keeps that thread
// off one. Read from the kernel's count of runnable threads
// (/proc/loadavg, fourth field) against the CPUs this process may run on, at most once
// per kSamplePeriod and after a wait (never on a wait's path).
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "client/api/unique_fd.h"

namespace accord {

class SpareCoreProbe {
 public:
  static constexpr std::chrono::milliseconds kSamplePeriod{10};

  // Opens /proc/loadavg; without it (no procfs) spare() stays true, so waiters spin as
  // configured, as before this probe existed.
  SpareCoreProbe();

  // As of the last sample: runnable threads (the caller included) fit on the CPUs.
  bool spare() const noexcept { return spare_.load(std::memory_order_relaxed); }
  // Takes a new sample if the last one is older than kSamplePeriod and no other thread
  // is taking one. A read of a small procfs file: a few microseconds.
  void refresh() noexcept;

 private:
  UniqueFd loadavg_;
  unsigned cpus_ = 1;
  std::atomic<bool> spare_{true};
  std::atomic<std::int64_t> sampled_ns_{0};  // steady clock; claimed by CAS
};

}  // namespace accord
