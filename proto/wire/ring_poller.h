// RingPoller: the small fixed set of threads that serve every session's submission ring
// on accordd's side (ARCHITECTURE.md, "Data plane"), not a thread per session. Each
// thread serves up to kRingsPerThread rings: it drains their submission queues, spins for
// a bounded time when all are empty, then sleeps in one futex_waitv on every ring's
// doorbell at once, so an idle daemon uses no CPU and a client's push wakes the thread
// that serves that ring. Only as many of the threads hold rings as the work keeps busy
// (sized_by_work; the first thread moves rings between them). accordd's service owns
// one; the handler does the work.
// Thread-safety: add(), remove(), size() and active() from any thread; the handler runs
// on poller threads, for one ring on one thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "accord/status.h"
#include "proto/wire/submission_ring.h"

namespace accord::wire {

// One ring as a poller serves it: the mapping and the consumer of its submissions.
struct ServedRing {
  explicit ServedRing(SubmissionRing r) : ring(std::move(r)), requests(ring.submissions()) {}
  SubmissionRing ring;
  RingConsumer<SubmitEntry> requests;  // touched only by the serving thread (handed over under its lock)
  std::uint64_t owner = 0;             // the handler's name for it (a session id)
  // Set by the handler in on_entry when it published answers without ringing the
  // client (RingProducer::try_push_unrung); the poller rings the completion doorbell
  // once at the end of its turn over every ring. Atomic: a ring moved to another thread
  // between its entries and that end of turn is rung by whichever thread looks first.
  std::atomic<bool> answers_unrung{false};
};

class RingHandler {
 public:
  // Whether `ring` may give up one more entry now (e.g. its completion queue has room
  // for the answers owed). When false the ring is passed over until its next turn.
  virtual bool can_take(ServedRing& ring) noexcept {
    static_cast<void>(ring);
    return true;
  }
  // One entry taken from `ring` (a copy: validate every field). Runs on a poller thread;
  // must not block on other work (a lease that has to wait is parked, not waited for).
  // Answers may be left unrung (ServedRing::answers_unrung).
  virtual void on_entry(ServedRing& ring, const SubmitEntry& entry) noexcept = 0;
  // The ring's producer index is impossible: the ring is no longer served (remove() is
  // still the owner's to call). Runs on a poller thread, once.
  virtual void on_corrupt(ServedRing& ring) noexcept = 0;
  // Called over and over while a poller thread spins with no entry to take: work that
  // a thread awake anyway may do instead of pausing (accordd looks at its GPUs'
  // completion words, so a GPU region's end is answered without waking another thread).
  // Must be cheap when there is nothing to do, and must not block.
  virtual void on_idle() noexcept {}

 protected:
  ~RingHandler() = default;
};

struct RingPollerOptions {
  std::size_t threads = 2;             // the most that serve rings
  std::chrono::microseconds spin{50};  // keep looking this long after the last entry
  // Longest sleep: bounds how long a ring whose client tampered with its own doorbell
  // waits for service, and costs an idle daemon one wake-up per thread per period.
  std::chrono::milliseconds max_sleep{100};
  // Serve the rings from as few of the threads as keep each busy about half the time at
  // most (ring_poller_sizing.h), looked at every `resize_every`; the others hold no ring
  // and sleep. False: every thread serves rings all the time.
  bool sized_by_work = true;
  std::chrono::milliseconds resize_every{20};
};

class RingPoller {
 public:
  // futex_waitv takes at most 128 words; one is the thread's own control word.
  static constexpr std::size_t kRingsPerThread = 127;

  // Starts the threads. `handler` must outlive *this. Errors: Invalid for 0 threads;
  // Internal when a thread cannot start.
  static Result<std::unique_ptr<RingPoller>> start(RingHandler& handler, const RingPollerOptions& options);
  // Stops and joins the threads; no handler call after it returns.
  ~RingPoller();
  RingPoller(const RingPoller&) = delete;
  RingPoller& operator=(const RingPoller&) = delete;

  // Serves `ring` from the least loaded thread. Busy when every thread serves
  // kRingsPerThread rings.
  Status add(std::shared_ptr<ServedRing> ring);
  // Stops serving `ring`; returns after any handler call for it has returned.
  void remove(const ServedRing& ring);

  // Rings served now (all threads).
  std::size_t size() const;
  // Threads that serve rings now (all of them unless sized_by_work), and the most that may.
  std::size_t active() const noexcept { return active_.load(std::memory_order_relaxed); }
  std::size_t most() const noexcept { return threads_.size(); }

 private:
  struct Thread;
  RingPoller(RingHandler& handler, const RingPollerOptions& options);
  void run(Thread& self) noexcept;
  // On the first thread, between its turns: sizes the serving set when a window is over.
  void resize_if_due(std::chrono::steady_clock::time_point now) noexcept;
  // Moves `ring` from `from` to `to` once `from` is not serving it. placement_mu_ held.
  void move_ring(const std::shared_ptr<ServedRing>& ring, Thread& from, Thread& to) noexcept;
  // The least loaded of the first `count` threads with room for one more ring, or null.
  Thread* least_loaded(std::size_t count) const;

  RingHandler& handler_;
  const RingPollerOptions options_;
  std::vector<std::unique_ptr<Thread>> threads_;
  // Which thread serves which ring changes only under it (add, remove, resizing), so that
  // remove() never misses a ring on its way between two threads.
  std::mutex placement_mu_;
  std::atomic<std::size_t> active_{0};  // threads_[0, active_) serve rings
  std::chrono::steady_clock::time_point window_start_{};  // the first thread's only
};

}  // namespace accord::wire
