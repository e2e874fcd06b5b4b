// The engine's ready queue (engine item 13): sessions that have a region ready to
// claim, in the order they became ready. Workers sleep on it and take from it,
// instead of scanning every pending submission of every session. It holds sessions, not
// regions: lane exclusivity and submission order are per session, so whoever pops a
// session claims its first ready region under that session's lock (and pushes it
// back, at the tail, if more is ready: tenants take turns).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "daemon/engine/session_schedule.h"

namespace accord::engine {

// Thread-safe. Each call holds the queue's own lock for a few pointer moves; it never
// calls out under it. Intrusive (SessionSchedule::next_ready): pushing never allocates.
class ReadyQueue {
 public:
  // Appends `q` and wakes one sleeping worker. The caller holds q.mu, has set q.queued,
  // and gives the queue a reference to q.owner, which the popper releases.
  void push(SessionSchedule& q) noexcept;
  // The oldest entry, or nullptr when empty.
  SessionSchedule* try_pop() noexcept;
  // The oldest entry; sleeps while the queue is empty. nullptr once `done()` holds with
  // the queue empty: whoever makes `done()` true calls wake_all() afterwards.
  template <class Done>
  SessionSchedule* pop_or_wait(Done done) {
    std::unique_lock lock(mu_);
    while (head_ == nullptr) {
      if (done()) return nullptr;
      ++sleepers_;
      cv_.wait(lock);
      --sleepers_;
    }
    return unlink_locked();
  }
  void wake_all() noexcept;

 private:
  SessionSchedule* unlink_locked() noexcept;

  std::mutex mu_;
  std::condition_variable cv_;
  SessionSchedule* head_ = nullptr;
  SessionSchedule* tail_ = nullptr;
  std::size_t sleepers_ = 0;
};

}  // namespace accord::engine
