// The ready queue: a mutex-guarded intrusive FIFO of sessions with a condition variable
// for idle workers. Pushes and pops are a few pointer moves, so the lock is held for
// far less than the per-session work it hands out.
#include "daemon/engine/ready_queue.h"

namespace accord::engine {

void ReadyQueue::push(SessionSchedule& q) noexcept {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    q.next_ready = nullptr;
    if (tail_ != nullptr) tail_->next_ready = &q;
    else head_ = &q;
    tail_ = &q;
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_one();
}

SessionSchedule* ReadyQueue::try_pop() noexcept {
  std::lock_guard lock(mu_);
  return head_ == nullptr ? nullptr : unlink_locked();
}

SessionSchedule* ReadyQueue::unlink_locked() noexcept {
  SessionSchedule* q = head_;
  head_ = q->next_ready;
  if (head_ == nullptr) tail_ = nullptr;
  q->next_ready = nullptr;
  return q;
}

void ReadyQueue::wake_all() noexcept {
  // Taking the lock orders this after a sleeper's last look at `done()`.
  { std::lock_guard lock(mu_); }
  cv_.notify_all();
}

}  // namespace accord::engine
