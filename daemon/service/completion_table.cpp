#include "daemon/service/completion_table.h"

#include <cstdint>

namespace accord::service {

CompletionTable::CompletionTable(std::size_t initial_slots) {
  slots_.resize(initial_slots);
  free_.reserve(initial_slots);
  // Lowest index on top, so a quiet session keeps reusing the same few slots.
  for (std::size_t i = initial_slots; i > 0; --i) free_.push_back(static_cast<std::uint32_t>(i - 1));
}

std::uint64_t CompletionTable::reserve() {
  if (free_.empty()) {
    // Every slot is held: grow, and keep room in free_ for each slot's return so that
    // freeing never allocates.
    const std::size_t old = slots_.size();
    const std::size_t grown = old == 0 ? 64 : old * 2;
    slots_.resize(grown);
    free_.reserve(grown);
    for (std::size_t i = grown; i > old; --i) free_.push_back(static_cast<std::uint32_t>(i - 1));
  }
  const std::uint32_t index = free_.back();
  free_.pop_back();
  Slot& slot = slots_[index];
  slot.state = State::Reserved;
  slot.observer = nullptr;
  ++held_;
  return (std::uint64_t{slot.generation} << 32) | index;
}

CompletionTable::Slot* CompletionTable::slot_of(std::uint64_t handle) noexcept {
  const auto index = static_cast<std::uint32_t>(handle);
  const auto generation = static_cast<std::uint32_t>(handle >> 32);
  if (index >= slots_.size()) return nullptr;
  Slot& slot = slots_[index];
  if (slot.state == State::Free || slot.state == State::Retired || slot.generation != generation) return nullptr;
  return &slot;
}

const CompletionTable::Slot* CompletionTable::slot_of(std::uint64_t handle) const noexcept {
  return const_cast<CompletionTable*>(this)->slot_of(handle);
}

bool CompletionTable::fill(std::uint64_t handle, engine::Submission* observer) noexcept {
  Slot* slot = slot_of(handle);
  if (slot == nullptr || slot->state != State::Reserved) return false;
  slot->observer = observer;
  slot->state = State::Filled;
  return true;
}

void CompletionTable::cancel(std::uint64_t handle) noexcept {
  Slot* slot = slot_of(handle);
  if (slot == nullptr || slot->state != State::Reserved) return;
  free_slot(static_cast<std::uint32_t>(handle));
}

engine::Submission* CompletionTable::find(std::uint64_t handle) const noexcept {
  const Slot* slot = slot_of(handle);
  return slot != nullptr && slot->state == State::Filled ? slot->observer : nullptr;
}

engine::Submission* CompletionTable::remove(std::uint64_t handle) noexcept {
  Slot* slot = slot_of(handle);
  if (slot == nullptr || slot->state != State::Filled) return nullptr;
  engine::Submission* observer = slot->observer;
  free_slot(static_cast<std::uint32_t>(handle));
  return observer;
}

void CompletionTable::free_slot(std::uint32_t index) noexcept {
  Slot& slot = slots_[index];
  slot.observer = nullptr;
  --held_;
  if (slot.generation == UINT32_MAX) {
    // Wrapping would give out a handle a client may still hold: the slot is spent.
    slot.state = State::Retired;
    return;
  }
  ++slot.generation;
  slot.state = State::Free;
  free_.push_back(index);  // capacity reserved for every slot
}

}  // namespace accord::service
