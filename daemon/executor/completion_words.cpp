// The completion word mapping and the watch a waiting thread sweeps.
#include "daemon/executor/completion_words.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace accord::executor::detail {

namespace {
constexpr std::uint64_t kMaxWordBytes = std::uint64_t{64} << 20;
}  // namespace

Result<std::shared_ptr<CompletionWordMapping>> CompletionWordMapping::map(UniqueFd fd, std::uint64_t bytes,
                                                                          const std::string& who, std::uint64_t offset) {
  struct stat file {};
  if (bytes == 0 || bytes > kMaxWordBytes || offset % 4096 != 0 || ::fstat(fd.get(), &file) != 0 ||
      static_cast<std::uint64_t>(file.st_size) < offset ||
      static_cast<std::uint64_t>(file.st_size) - offset < bytes)
    return invalid_error(who + ": completion words of " + std::to_string(bytes) + " bytes at " +
                         std::to_string(offset) + " in a file of " + std::to_string(file.st_size) + " bytes");
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), static_cast<off_t>(offset));
  if (base == MAP_FAILED) return internal_error(who + ": mapping its completion words: " + std::strerror(errno));
  // The mapping keeps the pages; the descriptor is not needed any more.
  return std::shared_ptr<CompletionWordMapping>(new CompletionWordMapping(base, static_cast<std::size_t>(bytes)));
}

CompletionWordMapping::~CompletionWordMapping() { ::munmap(base_, bytes_); }

std::atomic<std::uint32_t>* CompletionWordMapping::word(std::uint64_t offset) const noexcept {
  if (offset % alignof(std::atomic<std::uint32_t>) != 0 || offset >= bytes_ ||
      bytes_ - offset < sizeof(std::atomic<std::uint32_t>))
    return nullptr;
  // The executor made the word (an atomic in the same shared pages); this is our view.
  return reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::byte*>(base_) + offset);
}

CompletionWatch::CompletionWatch() {
  for (auto& word : bits_) word.store(0, std::memory_order_relaxed);
  for (auto& cell : cells_) cell.store(nullptr, std::memory_order_relaxed);
  free_.reserve(kCapacity);
  for (int i = static_cast<int>(kCapacity) - 1; i >= 0; --i) free_.push_back(i);
}

int CompletionWatch::add(LaunchCell& cell) {
  std::lock_guard lock(mu_);
  if (free_.empty()) return -1;
  const int index = free_.back();
  free_.pop_back();
  // Not armed until its first launch, so no sweep reads this entry before then.
  cells_[static_cast<std::size_t>(index)].store(&cell, std::memory_order_release);
  return index;
}

void CompletionWatch::remove(int index) noexcept {
  const auto i = static_cast<std::size_t>(index);
  // A sweep may be reading the cell: wait for it (sweeps never call sinks while they hold it).
  while (sweeping_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  disarm(i);
  cells_[i].store(nullptr, std::memory_order_release);
  sweeping_.clear(std::memory_order_release);
  std::lock_guard lock(mu_);
  free_.push_back(index);
}

void CompletionWatch::disarm(std::size_t index) noexcept {
  bits_[index / 64].fetch_and(~(std::uint64_t{1} << (index % 64)), std::memory_order_seq_cst);
}

bool CompletionWatch::any_done() const noexcept {
  std::uint64_t summary = summary_.load(std::memory_order_acquire);
  while (summary != 0) {
    const auto w = static_cast<std::size_t>(__builtin_ctzll(summary));
    summary &= summary - 1;
    for (std::uint64_t bits = bits_[w].load(std::memory_order_acquire); bits != 0; bits &= bits - 1) {
      const LaunchCell* cell = cells_[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))].load(std::memory_order_acquire);
      // A cell being removed is not armed; one armed is not removed (its region is in use).
      if (cell == nullptr) continue;
      const std::uint32_t number = cell->launch.load(std::memory_order_acquire);
      if (number != 0 && cell->word_says_done(number)) return true;
    }
  }
  return false;
}

int CompletionWatch::sweep() noexcept {
  if (sweeping_.test_and_set(std::memory_order_acquire)) return 0;
  std::array<devices::CompletionSink*, kBatch> done;
  std::size_t count = 0;
  std::uint64_t summary = summary_.load(std::memory_order_seq_cst);
  while (summary != 0 && count < kBatch) {
    const auto w = static_cast<std::size_t>(__builtin_ctzll(summary));
    summary &= summary - 1;
    std::uint64_t bits = bits_[w].load(std::memory_order_seq_cst);
    if (bits == 0) {
      // Cleared lazily; an arm() racing with this sets it again (arm sets the bit first).
      summary_.fetch_and(~(std::uint64_t{1} << w), std::memory_order_seq_cst);
      if (bits_[w].load(std::memory_order_seq_cst) != 0) summary_.fetch_or(std::uint64_t{1} << w, std::memory_order_seq_cst);
      continue;
    }
    while (bits != 0 && count < kBatch) {
      const std::size_t index = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      bits &= bits - 1;
      LaunchCell* cell = cells_[index].load(std::memory_order_acquire);
      if (cell == nullptr) {
        disarm(index);
        continue;
      }
      const std::uint32_t number = cell->launch.load(std::memory_order_acquire);
      if (number == 0) {
        // Reported through a completion record. A launch published meanwhile re-arms.
        disarm(index);
        if (cell->launch.load(std::memory_order_seq_cst) != 0) arm(static_cast<int>(index));
        continue;
      }
      // The echo first: once it names this launch, the device's clearing of the word is
      // behind us, and a 1 is this launch's.
      if (!cell->word_says_done(number)) continue;
      if (!cell->claim(number)) continue;  // a completion record was first
      // Nothing launches in this slot again before the report below.
      disarm(index);
      done[count++] = cell->sink;
    }
  }
  sweeping_.clear(std::memory_order_release);
  for (std::size_t i = 0; i < count; ++i) done[i]->on_done();
  return static_cast<int>(count);
}

}  // namespace accord::executor::detail
