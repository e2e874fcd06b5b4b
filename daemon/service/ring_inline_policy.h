// RingInlinePolicy: which of a session's submissions its ring poller runs itself
// (engine::Scheduler::submit_and_run) instead of handing them to an engine worker. One
// poller thread serves up to 127 sessions, so it takes on only graphs seen to be short:
// each graph's last run time (from its completion profile) is kept in a small
// direct-mapped table, and a graph not found there goes to the workers and is measured.
// Thread-safety: every member is thread-safe. Relaxed atomics: a stale entry, or one
// another graph overwrote, costs one choice of thread, never correctness.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "accord/completion.h"

namespace accord::service {

class RingInlinePolicy {
 public:
  // The longest run a poller takes on: about what waking a worker costs on a small VM
  // (5-15 us), so that a run on the poller delays its other rings no more than the
  // hand-off it saves would have delayed this one.
  static constexpr double kMaxInlineUs = 10.0;

  // Whether the poller should run graph `graph` (a session handle) itself.
  bool run_here(std::uint64_t graph) const noexcept {
    if (graph == 0 || graph > kMaxGraph) return false;
    const std::uint64_t slot = slots_[graph % kSlots].load(std::memory_order_relaxed);
    return (slot >> kCostBits) == graph && static_cast<double>(slot & kCostMask) <= kMaxInlineUs;
  }

  // Records a terminal submission of `graph`: its regions ran from the first start to
  // the end (elapsed - queue), whichever thread ran them. Nothing when none ran.
  void ran(std::uint64_t graph, const CompletionProfile& profile) noexcept {
    if (graph == 0 || graph > kMaxGraph || !profile.queue_us) return;
    const double run_us = profile.elapsed_us - *profile.queue_us;
    const std::uint64_t cost = run_us >= static_cast<double>(kCostMask) ? kCostMask
                                                                        : static_cast<std::uint64_t>(run_us + 0.999);
    slots_[graph % kSlots].store((graph << kCostBits) | cost, std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t kSlots = 64;  // graphs a session submits in rotation
  static constexpr unsigned kCostBits = 16;  // microseconds, saturating
  static constexpr std::uint64_t kCostMask = (std::uint64_t{1} << kCostBits) - 1;
  static constexpr std::uint64_t kMaxGraph = (std::uint64_t{1} << (64 - kCostBits)) - 1;
  std::array<std::atomic<std::uint64_t>, kSlots> slots_{};  // (graph << 16) | cost us; 0 = empty
};

}  // namespace accord::service
