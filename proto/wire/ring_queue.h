// One direction of a session's ring (ring_layout.h), as each side sees it: RingProducer
// publishes entries, RingConsumer takes them, and both keep their own index in private
// memory, so what the other process writes into the shared one can never move it: the
// shared copy is only ever written. The other side's index is read and checked.
// Not thread-safe: one thread (or a caller-held lock) per producer and per consumer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "proto/wire/ring_doorbell.h"
#include "proto/wire/ring_layout.h"

namespace accord::wire {

// The shared parts of one queue: its indices, entries and the consumer's doorbell.
template <class Entry>
struct RingQueueView {
  RingIndex* head = nullptr;  // the consumer's
  RingIndex* tail = nullptr;  // the producer's
  Entry* entries = nullptr;
  std::uint32_t capacity = 0;  // a power of two, from the side that made the ring
  RingDoorbell* bell = nullptr;
};

template <class Entry>
class RingProducer {
 public:
  RingProducer() = default;
  explicit RingProducer(RingQueueView<Entry> view) noexcept
      : view_(view),
        tail_(view.tail->value.load(std::memory_order_relaxed)),
        known_head_(view.head->value.load(std::memory_order_acquire)) {}

  // Whether every position is taken (the consumer has not freed one), or the consumer's
  // index is impossible (treated as full; corrupt() says so). As has_room: while the
  // queue has room, a push touches no line the consumer writes.
  bool full() const noexcept { return !has_room(1); }
  bool corrupt() const noexcept {
    return tail_ - view_.head->value.load(std::memory_order_acquire) > view_.capacity;
  }
  // Whether `n` more entries fit (none when the consumer's index is impossible), reading
  // the consumer's index only when the last one read does not show room for them: a
  // poller asks this of the answers' queue on every entry it takes, and accordd of the
  // executor's command queue on every launch, and a read of the other side's index
  // would be one more cache-line transfer between the processes each time.
  bool has_room(std::uint32_t n) const noexcept {
    if (n <= view_.capacity && tail_ - known_head_ <= view_.capacity - n) return true;
    known_head_ = view_.head->value.load(std::memory_order_acquire);
    const std::uint32_t used = tail_ - known_head_;
    return used <= view_.capacity && n <= view_.capacity - used;
  }
  // The position the next push() writes (for side data such as a RingMessage).
  std::uint32_t next_position() const noexcept { return tail_ & (view_.capacity - 1); }

  // Publishes `entry` and rings the consumer's doorbell. Returns false, writing nothing,
  // when full().
  bool try_push(const Entry& entry) noexcept {
    if (!try_push_unrung(entry)) return false;
    ring_doorbell(*view_.bell);
    return true;
  }
  // As try_push, without ringing: the caller rings the doorbell (ring_doorbell) later,
  // once for several entries. A consumer that spins sees the entry at once; one that
  // sleeps wakes only at that ring, which must come (ring_layout.h, "Doorbells").
  bool try_push_unrung(const Entry& entry) noexcept {
    if (full()) return false;
    view_.entries[tail_ & (view_.capacity - 1)] = entry;
    ++tail_;
    view_.tail->value.store(tail_, std::memory_order_release);
    return true;
  }

 private:
  RingQueueView<Entry> view_{};
  std::uint32_t tail_ = 0;  // ours; the shared copy is only written
  // The consumer's index as last read (acquire): every position before it was freed, so
  // a stale value only underestimates the room.
  mutable std::uint32_t known_head_ = 0;
};

enum class PopResult : std::uint8_t { Empty, Ok, Corrupt };

template <class Entry>
class RingConsumer {
 public:
  RingConsumer() = default;
  explicit RingConsumer(RingQueueView<Entry> view) noexcept
      : view_(view), head_(view.head->value.load(std::memory_order_relaxed)) {}

  // Copies the oldest entry out and frees its position. Corrupt when the producer's
  // index claims more entries than the queue holds (nothing is read then); the queue is
  // unusable from there on.
  PopResult try_pop(Entry& out, std::uint32_t* position = nullptr) noexcept {
    const std::uint32_t tail = view_.tail->value.load(std::memory_order_acquire);
    const std::uint32_t available = tail - head_;
    if (available == 0) return PopResult::Empty;
    if (available > view_.capacity) return PopResult::Corrupt;
    const std::uint32_t at = head_ & (view_.capacity - 1);
    out = view_.entries[at];  // a copy: checked afterwards, never re-read from shared memory
    if (position != nullptr) *position = at;
    ++head_;
    view_.head->value.store(head_, std::memory_order_release);
    return PopResult::Ok;
  }

  // As try_pop, and calls `side(position)` after the copy and before the position is
  // freed, so side data the producer wrote for that position (a long error message) can
  // be read without the producer reusing it meanwhile.
  template <class Side>
  PopResult try_pop_with(Entry& out, Side&& side) noexcept {
    const std::uint32_t tail = view_.tail->value.load(std::memory_order_acquire);
    const std::uint32_t available = tail - head_;
    if (available == 0) return PopResult::Empty;
    if (available > view_.capacity) return PopResult::Corrupt;
    const std::uint32_t at = head_ & (view_.capacity - 1);
    out = view_.entries[at];
    side(at);
    ++head_;
    view_.head->value.store(head_, std::memory_order_release);
    return PopResult::Ok;
  }

  bool empty() const noexcept { return view_.tail->value.load(std::memory_order_acquire) == head_; }

  // Waits until an entry may be there, spinning for `spin` and then sleeping on the
  // doorbell, at most until `timeout` has passed (negative: no limit). Returns false on
  // timeout. A corrupt index also ends the wait (try_pop then says so).
  bool wait(std::chrono::nanoseconds spin, std::chrono::nanoseconds timeout) noexcept {
    return wait_doorbell(*view_.bell, spin, timeout, [this] { return !empty(); });
  }

 private:
  RingQueueView<Entry> view_{};
  std::uint32_t head_ = 0;  // ours; the shared copy is only written
};

}  // namespace accord::wire
