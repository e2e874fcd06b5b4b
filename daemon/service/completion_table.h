// The completion handles of one session: which accepted submission each handle observes.
// Submit and release use it on every ring round trip, so it is a slab, not a map: a
// handle is a slot index and that slot's generation, and steady state allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/engine/submission.h"

namespace accord::service {

// A handle is (generation << 32) | index with a generation of at least 1, so it is never
// below 2^32: the other kinds of handle count up from 1 and never collide with one. A
// handle is never given out twice: each reuse of a slot moves its generation on, and a
// slot whose generation is spent (2^32 - 1 uses, days of one submission at a time) is
// retired rather than wrapped. Not thread-safe: ServiceSession locks around it.
class CompletionTable {
 public:
  // Slots made at once: a session with up to this many completions held never grows.
  explicit CompletionTable(std::size_t initial_slots = 64);

  // A new handle that lookups do not see until fill() gives it its observer. Allocates
  // only when more handles are held than ever before in this session.
  std::uint64_t reserve();
  // Gives a reservation its observer; false when `handle` is not a reservation here.
  bool fill(std::uint64_t handle, engine::Submission* observer) noexcept;
  // Drops a reservation that never got an observer.
  void cancel(std::uint64_t handle) noexcept;
  // The observer of a filled handle; null for a reservation or a handle not held.
  engine::Submission* find(std::uint64_t handle) const noexcept;
  // Removes a filled handle and hands its observer reference to the caller; null when
  // `handle` is not a filled handle here (nothing changes then).
  engine::Submission* remove(std::uint64_t handle) noexcept;

  std::size_t size() const noexcept { return held_; }
  // Empties the table, giving every filled handle's observer to `each`.
  template <class Fn>
  void drain(Fn&& each) {
    for (std::uint32_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].state == State::Reserved || slots_[i].state == State::Filled) {
        if (slots_[i].state == State::Filled) each(slots_[i].observer);
        free_slot(i);
      }
  }

  // Tests only: the generation slot `index` gives its next handle, to reach the end of
  // the generations without 2^32 submissions. The slot must be free.
  void set_generation_for_testing(std::uint32_t index, std::uint32_t generation) noexcept {
    slots_[index].generation = generation;
  }

 private:
  enum class State : std::uint8_t { Free, Reserved, Filled, Retired };
  struct Slot {
    engine::Submission* observer = nullptr;
    std::uint32_t generation = 1;
    State state = State::Free;
  };
  // The slot `handle` names while its generation is current; null otherwise.
  Slot* slot_of(std::uint64_t handle) noexcept;
  const Slot* slot_of(std::uint64_t handle) const noexcept;
  void free_slot(std::uint32_t index) noexcept;

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;  // indices of free slots; capacity kept for every slot
  std::size_t held_ = 0;
};

}  // namespace accord::service
