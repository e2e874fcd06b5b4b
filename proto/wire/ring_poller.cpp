// The poller threads. Why futex_waitv: a thread sleeps on every ring it serves at once,
// each ring keeps its own doorbell (a client can only ever ring, or spoil, its own), and
// a push wakes exactly one thread. The thread's control word is the first waiter, so
// add(), remove() and shutdown wake it too.
#include "proto/wire/ring_poller.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <ctime>

#include "client/api/thread_name.h"
#include "proto/wire/ring_poller_sizing.h"

namespace accord::wire {
namespace {

constexpr std::uint32_t kBatch = 16;  // entries per ring per turn, so one busy ring cannot starve the rest

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Sleeps until one word of `waiters` differs from its value, or until `timeout`. Falls
// back to a timed sleep on the first word where the kernel lacks futex_waitv (< 5.16).
void wait_any(futex_waitv* waiters, std::size_t count, std::chrono::milliseconds timeout) noexcept {
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  const long long ns = deadline.tv_nsec + std::chrono::nanoseconds(timeout).count();
  deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
  deadline.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  const long r = syscall(SYS_futex_waitv, waiters, static_cast<unsigned>(count), 0u, &deadline, CLOCK_MONOTONIC);
  if (r == -1 && errno == ENOSYS) {
    auto* first = reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::uintptr_t>(waiters[0].uaddr));
    futex_wait(*first, static_cast<std::uint32_t>(waiters[0].val), std::chrono::milliseconds(1));
  }
}

}  // namespace

struct RingPoller::Thread {
  std::mutex mu;
  std::condition_variable idle;                     // remove() waits here for `busy` to move on
  std::vector<std::shared_ptr<ServedRing>> rings;  // guarded by mu
  std::uint64_t generation = 0;                     // guarded by mu: bumped when `rings` changes
  const ServedRing* busy = nullptr;                 // guarded by mu: the ring being served now
  bool stop = false;                                // guarded by mu
  std::atomic<std::uint32_t> control{0};            // bumped on any change: wakes the thread
  alignas(64) std::atomic<std::int64_t> busy_ns{0};  // turns that took entries, since the first thread last looked
  std::thread thread;

  void poke() noexcept {
    control.fetch_add(1, std::memory_order_release);
    futex_wake_all(control);
  }
};

Result<std::unique_ptr<RingPoller>> RingPoller::start(RingHandler& handler, const RingPollerOptions& options) {
  if (options.threads == 0) return invalid_error("ring poller: at least one thread is needed");
  std::unique_ptr<RingPoller> poller(new RingPoller(handler, options));
  try {
    for (std::size_t i = 0; i < options.threads; ++i) {
      poller->threads_.push_back(std::make_unique<Thread>());
      poller->threads_.back()->rings.reserve(kRingsPerThread);
    }
    for (auto& t : poller->threads_) t->thread = std::thread([p = poller.get(), self = t.get()] { p->run(*self); });
  } catch (const std::system_error& e) {
    return internal_error(std::string("ring poller: cannot start a thread: ") + e.what());
  }
  return poller;
}

RingPoller::RingPoller(RingHandler& handler, const RingPollerOptions& options)
    : handler_(handler), options_(options), active_(options.threads), window_start_(std::chrono::steady_clock::now()) {}

RingPoller::~RingPoller() {
  for (auto& t : threads_) {
    {
      const std::lock_guard lock(t->mu);
      t->stop = true;
    }
    t->poke();
  }
  for (auto& t : threads_)
    if (t->thread.joinable()) t->thread.join();
}

Status RingPoller::add(std::shared_ptr<ServedRing> ring) {
  const std::lock_guard placement(placement_mu_);
  Thread* least = least_loaded(active_.load(std::memory_order_relaxed));
  // Every serving thread is full: one more serves, if there is one.
  if (least == nullptr && active_.load(std::memory_order_relaxed) < threads_.size())
    least = threads_[active_.fetch_add(1, std::memory_order_relaxed)].get();
  if (least == nullptr)
    return busy_error("ring poller: every thread serves " + std::to_string(kRingsPerThread) + " rings");
  {
    const std::lock_guard lock(least->mu);
    least->rings.push_back(std::move(ring));  // reserved at start: no reallocation
    ++least->generation;
  }
  least->poke();
  return {};
}

RingPoller::Thread* RingPoller::least_loaded(std::size_t count) const {
  Thread* least = nullptr;
  std::size_t fewest = kRingsPerThread;
  for (std::size_t i = 0; i < count && i < threads_.size(); ++i) {
    Thread& t = *threads_[i];
    const std::lock_guard lock(t.mu);
    if (t.rings.size() < fewest) {
      fewest = t.rings.size();
      least = &t;
    }
  }
  return least;
}

void RingPoller::remove(const ServedRing& ring) {
  const std::lock_guard placement(placement_mu_);
  for (auto& t : threads_) {
    std::unique_lock lock(t->mu);
    const auto it = std::find_if(t->rings.begin(), t->rings.end(), [&](const auto& r) { return r.get() == &ring; });
    if (it != t->rings.end()) {
      t->rings.erase(it);
      ++t->generation;
    }
    t->idle.wait(lock, [&] { return t->busy != &ring; });
  }
  for (auto& t : threads_) t->poke();
}

std::size_t RingPoller::size() const {
  std::size_t n = 0;
  for (const auto& t : threads_) {
    const std::lock_guard lock(t->mu);
    n += t->rings.size();
  }
  return n;
}

void RingPoller::move_ring(const std::shared_ptr<ServedRing>& ring, Thread& from, Thread& to) noexcept {
  {
    std::unique_lock lock(from.mu);
    const auto it = std::find(from.rings.begin(), from.rings.end(), ring);
    if (it == from.rings.end()) return;
    from.rings.erase(it);
    ++from.generation;
    from.idle.wait(lock, [&] { return from.busy != ring.get(); });
  }
  {
    const std::lock_guard lock(to.mu);
    to.rings.push_back(ring);  // reserved at start, and `to` has room: no reallocation
    ++to.generation;
  }
  from.poke();
  to.poke();
}

void RingPoller::resize_if_due(std::chrono::steady_clock::time_point now) noexcept {
  if (!options_.sized_by_work || now - window_start_ < options_.resize_every) return;
  const std::int64_t window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - window_start_).count();
  window_start_ = now;
  std::int64_t busy_ns = 0;
  for (auto& t : threads_) busy_ns += t->busy_ns.exchange(0, std::memory_order_relaxed);
  const std::lock_guard placement(placement_mu_);
  const std::size_t active = active_.load(std::memory_order_relaxed);
  std::size_t rings = 0;
  for (auto& t : threads_) {
    const std::lock_guard lock(t->mu);
    rings += t->rings.size();
  }
  const std::size_t floor = (rings + kRingsPerThread - 1) / kRingsPerThread;
  // More serving threads than rings would have nothing to serve.
  const std::size_t most = std::min(threads_.size(), std::max<std::size_t>(rings, 1));
  const std::size_t wanted = pollers_wanted(busy_ns, window_ns, active, floor, most);
  if (wanted == active) return;
  if (wanted < active) {
    // The last serving threads hand their rings to the least loaded of the ones that stay.
    active_.store(wanted, std::memory_order_relaxed);
    for (std::size_t i = wanted; i < active; ++i) {
      Thread& leaving = *threads_[i];
      std::vector<std::shared_ptr<ServedRing>> theirs;
      {
        const std::lock_guard lock(leaving.mu);
        theirs = leaving.rings;
      }
      for (const auto& ring : theirs)
        if (Thread* to = least_loaded(wanted); to != nullptr) move_ring(ring, leaving, *to);
    }
    return;
  }
  // Growing: the new threads take rings from the most loaded ones until they even out.
  active_.store(wanted, std::memory_order_relaxed);
  const std::size_t each = (rings + wanted - 1) / wanted;
  for (std::size_t i = active; i < wanted; ++i) {
    Thread& joining = *threads_[i];
    for (std::size_t j = 0; j < active; ++j) {
      Thread& giving = *threads_[j];
      std::vector<std::shared_ptr<ServedRing>> extra;
      {
        const std::lock_guard lock(giving.mu);
        const std::lock_guard joined(joining.mu);
        const std::size_t room = each > joining.rings.size() ? each - joining.rings.size() : 0;
        const std::size_t surplus = giving.rings.size() > each ? giving.rings.size() - each : 0;
        const std::size_t count = std::min(room, surplus);
        extra.assign(giving.rings.end() - static_cast<std::ptrdiff_t>(count), giving.rings.end());
      }
      for (const auto& ring : extra) move_ring(ring, giving, joining);
    }
  }
}

void RingPoller::run(Thread& self) noexcept {
  name_this_thread("accord-ring");
  using Clock = std::chrono::steady_clock;
  std::vector<std::shared_ptr<ServedRing>> served;  // this thread's copy of self.rings
  served.reserve(kRingsPerThread);
  std::vector<futex_waitv> waiters(kRingsPerThread + 1);
  std::uint64_t seen_generation = ~std::uint64_t{0};
  auto last_entry = Clock::now();
  for (;;) {
    const std::uint32_t control = self.control.load(std::memory_order_acquire);
    {
      const std::lock_guard lock(self.mu);
      if (self.stop) return;
      if (self.generation != seen_generation) {
        served.assign(self.rings.begin(), self.rings.end());
        seen_generation = self.generation;
      }
    }
    const auto turn_start = Clock::now();
    if (&self == threads_.front().get()) resize_if_due(turn_start);
    bool took = false;
    for (const auto& ring : served) {
      // Most rings have nothing most of the time: one load of the client's index (a line
      // it wrote only if it pushed) passes them over, without the locks below, so a turn
      // over 127 idle rings costs well under a microsecond. Reading it unlocked is safe:
      // `served` keeps the ring mapped, and a ring removed meanwhile is caught below.
      if (ring->requests.empty()) continue;
      {
        const std::lock_guard lock(self.mu);
        if (self.generation != seen_generation) break;  // removed meanwhile: take a fresh copy first
        self.busy = ring.get();
      }
      bool corrupt = false;
      for (std::uint32_t n = 0; n < kBatch && handler_.can_take(*ring); ++n) {
        SubmitEntry entry;
        const PopResult r = ring->requests.try_pop(entry);
        if (r == PopResult::Empty) break;
        if (r == PopResult::Corrupt) {
          corrupt = true;
          break;
        }
        took = true;
        handler_.on_entry(*ring, entry);
      }
      if (corrupt) handler_.on_corrupt(*ring);
      {
        const std::lock_guard lock(self.mu);
        self.busy = nullptr;
        if (corrupt) {  // never served again: the owner still calls remove()
          const auto it = std::find(self.rings.begin(), self.rings.end(), ring);
          if (it != self.rings.end()) {
            self.rings.erase(it);
            ++self.generation;
          }
        }
      }
      self.idle.notify_all();
    }
    if (took) {
      // Clients woken only now, after the whole turn: a woken client would preempt this
      // thread in the middle of it (on a busy machine, once per answer), and then wait
      // for it anyway to write the answers of the rings after its own.
      for (const auto& ring : served)
        if (ring->answers_unrung.load(std::memory_order_relaxed) &&
            ring->answers_unrung.exchange(false, std::memory_order_acq_rel))
          ring_doorbell(*ring->ring.completions().bell);
      last_entry = Clock::now();
      self.busy_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(last_entry - turn_start).count(),
                             std::memory_order_relaxed);
      continue;
    }
    // Nothing taken: the turn was a look at each ring's index, so its start is now enough.
    if (turn_start - last_entry < options_.spin) {
      handler_.on_idle();
      cpu_relax();
      continue;
    }
    // Sleep on every ring's doorbell and the control word. Count ourselves as a sleeper
    // first, then look once more: a push that saw no sleeper is found here (ring_layout.h).
    std::size_t count = 0;
    waiters[count++] = futex_waitv{control, reinterpret_cast<std::uintptr_t>(&self.control), FUTEX_32, 0};
    for (const auto& ring : served) {
      RingDoorbell& bell = *ring->ring.submissions().bell;
      waiters[count++] = futex_waitv{bell.sequence.load(std::memory_order_acquire),
                                     reinterpret_cast<std::uintptr_t>(&bell.sequence), FUTEX_32, 0};
      bell.sleepers.fetch_add(1, std::memory_order_acq_rel);  // then look once more: see ring_doorbell
    }
    // A ring whose entries cannot be taken yet (its client is not reading its answers)
    // does not keep the thread awake: its client rings again when it has read them.
    const bool pending = std::any_of(served.begin(), served.end(),
                                     [&](const auto& r) { return !r->requests.empty() && handler_.can_take(*r); });
    if (!pending && self.control.load(std::memory_order_acquire) == control)
      wait_any(waiters.data(), count, options_.max_sleep);
    for (const auto& ring : served) ring->ring.submissions().bell->sleepers.fetch_sub(1, std::memory_order_relaxed);
    last_entry = Clock::now();  // spin again after a wake-up: more entries usually follow
  }
}

}  // namespace accord::wire
