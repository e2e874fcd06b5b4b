// How accordd sees a GPU executor's launches end without waiting for the executor to say
// so (README.md, "Completion words"): the executor's device writes each slot's
// completion word in a memfd both processes map (CUDA's completion flags), and a thread
// of accordd that waits for the GPU reads it, as it would in process. Completion records
// still come through the ring (errors, and every launch nobody was watching); each
// launch is numbered so that whichever of the two sees it first reports it, once.
// Thread-safety: CompletionWordMapping is immutable after map(); LaunchCell and
// CompletionWatch say per member.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "daemon/devices/device.h"

namespace accord::executor::detail {

// The executor's completion word memfd, mapped shared into accordd. Shared by the
// connection and every region of its generation, so a word stays mapped as long as a
// region may still touch it.
class CompletionWordMapping {
 public:
  // Maps `bytes` of `fd` from `offset` (page-aligned). Invalid for a size that is 0,
  // above 64 MiB or past the file's end; Internal when mmap fails. Also maps the launch
  // echoes of accordd's own channel file (ExecutorChannel::echo_offset).
  static Result<std::shared_ptr<CompletionWordMapping>> map(UniqueFd fd, std::uint64_t bytes, const std::string& who,
                                                            std::uint64_t offset = 0);
  ~CompletionWordMapping();
  CompletionWordMapping(const CompletionWordMapping&) = delete;
  CompletionWordMapping& operator=(const CompletionWordMapping&) = delete;

  // The word at `offset`; nullptr when it is not a whole, aligned word of the mapping.
  std::atomic<std::uint32_t>* word(std::uint64_t offset) const noexcept;

 private:
  CompletionWordMapping(void* base, std::size_t bytes) noexcept : base_(base), bytes_(bytes) {}
  void* base_;
  std::size_t bytes_;
};

// One slot of an accordd-side region: the launch in flight there and how to see it end.
// launch() writes `sink`, then publishes `launch` (numbers are unique per device, so an
// echo left by an earlier user of a watch index never names a later launch); any thread may
// claim() a launch; only the claimer reads `sink`, and the next launch of the slot comes
// only after the claimer reported.
struct LaunchCell {
  std::atomic<std::uint32_t> launch{0};        // the launch in flight; 0: none
  devices::CompletionSink* sink = nullptr;     // its sink, written before `launch`
  std::atomic<std::uint32_t>* word = nullptr;  // the executor's completion word; null: none
  // The executor's echo of the launch it last started here (ExecutorChannel::launch_echo
  // at `watch`): the word is this launch's only while the echo names it, since the
  // device clears the word in its launch(), after accordd published the number.
  std::atomic<std::uint32_t>* echo = nullptr;
  int watch = -1;  // the slot's index in CompletionWatch (and of its echo); -1: none

  // Whether the word says launch `number` has ended.
  bool word_says_done(std::uint32_t number) const noexcept {
    return echo->load(std::memory_order_acquire) == number &&
           word->load(std::memory_order_acquire) == devices::kCompletionWordDone;
  }
  // Takes launch `number` for reporting: true for exactly one caller while it is in flight.
  bool claim(std::uint32_t number) noexcept {
    return launch.compare_exchange_strong(number, 0, std::memory_order_acq_rel);
  }
  // Takes whatever launch is in flight; its sink, or nullptr when there is none.
  devices::CompletionSink* claim_any() noexcept {
    std::uint32_t number = launch.load(std::memory_order_acquire);
    while (number != 0)
      if (launch.compare_exchange_weak(number, 0, std::memory_order_acq_rel)) return sink;
    return nullptr;
  }
};

// The slots with a completion word that a waiting thread sweeps: a fixed table of cells
// and a two-level bitmap of those with a launch in flight, so a sweep reads a few words
// when little is in flight and never allocates. Regions beyond its capacity go without
// (their launches end through completion records, as without words).
// Thread-safety: add() and remove() from any thread (a mutex; not on the hot path);
// arm() from launch(), lock-free; sweep() from any thread, one at a time (a try-lock).
class CompletionWatch {
 public:
  static constexpr std::size_t kCapacity = 4096;

  CompletionWatch();
  // Watches `cell` (which must have a word and an echo); returns its index, or -1 when the
  // table is full.
  int add(LaunchCell& cell);
  // Stops watching index `index` (from add()). Waits for a sweep under way.
  void remove(int index) noexcept;
  // Marks index `index` as having a launch in flight (after the cell published it).
  void arm(int index) noexcept {
    const auto i = static_cast<std::size_t>(index);
    if ((bits_[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_seq_cst) & (std::uint64_t{1} << (i % 64))) == 0)
      summary_.fetch_or(std::uint64_t{1} << (i / 64), std::memory_order_seq_cst);
  }
  // Claims the armed launches whose word reads 1 and reports them (on_done) on the
  // calling thread, after the sweep lock is given back. Returns how many it reported; 0
  // at once when another thread sweeps. No lock a sink takes may be held.
  int sweep() noexcept;
  // True when an armed launch's word reads 1: a sweep would report something. Reads only;
  // for a thread deciding whether to sleep.
  bool any_done() const noexcept;
  // Whether some slot may have a launch in flight (false positives: the summary is
  // cleared lazily by sweeps). One load, for a thread deciding whether to sweep at all.
  bool armed() const noexcept { return summary_.load(std::memory_order_relaxed) != 0; }

 private:
  static constexpr std::size_t kWords = kCapacity / 64;
  static_assert(kWords <= 64, "one summary word");
  static constexpr std::size_t kBatch = 32;  // reports collected per sweep

  void disarm(std::size_t index) noexcept;

  std::atomic_flag sweeping_ = ATOMIC_FLAG_INIT;
  std::atomic<std::uint64_t> summary_{0};  // bit w: bits_[w] may be nonzero
  std::array<std::atomic<std::uint64_t>, kWords> bits_;
  // An entry is set by add() before its first arm() and cleared by remove() under sweeping_.
  std::array<std::atomic<LaunchCell*>, kCapacity> cells_;
  std::mutex mu_;
  std::vector<int> free_;  // guarded by mu_
};

}  // namespace accord::executor::detail
