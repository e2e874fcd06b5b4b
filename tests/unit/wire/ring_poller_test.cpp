// RingPoller (proto/wire/ring_poller.h): every entry of every ring reaches the handler
// once and in order, a sleeping poller wakes for a push, a corrupt ring is dropped while
// the others go on, remove() waits out a running handler, a full poller says Busy, and
// on_idle is called while a poller spins, never while it sleeps; sized by its work, it
// serves from fewer threads when idle and from more under load, and rings moved between
// threads keep their entries in order (pollers_wanted, the policy, apart).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/wire/ring_poller.h"
#include "proto/wire/ring_poller_sizing.h"

namespace accord::wire {
namespace {

using namespace std::chrono_literals;

// Records entries per ring owner; can hold one owner's handler until released.
class RecordingHandler final : public RingHandler {
 public:
  void on_entry(ServedRing& ring, const SubmitEntry& entry) noexcept override {
    std::unique_lock lock(mu_);
    seen_[ring.owner].push_back(entry.tag);
    if (ring.owner == hold_owner_) {
      in_held_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !holding_; });
      in_held_ = false;
    }
    changed_.notify_all();
  }
  void on_corrupt(ServedRing& ring) noexcept override {
    const std::lock_guard lock(mu_);
    corrupt_.push_back(ring.owner);
    changed_.notify_all();
  }
  bool wait_for_count(std::uint64_t owner, std::size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 10s, [&] { return seen_[owner].size() >= n; });
  }
  std::vector<std::uint64_t> seen(std::uint64_t owner) {
    const std::lock_guard lock(mu_);
    return seen_[owner];
  }
  std::vector<std::uint64_t> corrupt() {
    const std::lock_guard lock(mu_);
    return corrupt_;
  }
  void hold(std::uint64_t owner) {
    const std::lock_guard lock(mu_);
    hold_owner_ = owner;
    holding_ = true;
  }
  bool wait_until_held() {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 10s, [&] { return in_held_; });
  }
  void release() {
    const std::lock_guard lock(mu_);
    holding_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> seen_[8];
  std::vector<std::uint64_t> corrupt_;
  std::uint64_t hold_owner_ = ~std::uint64_t{0};
  bool holding_ = false;
  bool in_held_ = false;
};

// A ring as accordd serves it, and the client's side of the same memfd.
struct Pair {
  std::shared_ptr<ServedRing> served;
  SubmissionRing client;
  RingProducer<SubmitEntry> submit;
};

Pair make_pair(std::uint64_t owner, RingGeometry geometry = {64, 64}) {
  auto created = SubmissionRing::create(geometry);
  REQUIRE(created.ok());
  auto served = std::make_shared<ServedRing>(std::move(created).value());
  served->owner = owner;
  auto attached = SubmissionRing::attach(UniqueFd(::dup(served->ring.fd())));
  REQUIRE(attached.ok());
  Pair p{served, std::move(attached).value(), {}};
  p.submit = RingProducer<SubmitEntry>(p.client.submissions());
  return p;
}

std::unique_ptr<RingPoller> start_poller(RingHandler& handler, std::size_t threads, bool sized_by_work = false,
                                         std::chrono::milliseconds max_sleep = 50ms) {
  RingPollerOptions options;
  options.threads = threads;
  options.spin = 20us;
  options.max_sleep = max_sleep;
  options.sized_by_work = sized_by_work;
  options.resize_every = 5ms;
  auto poller = RingPoller::start(handler, options);
  REQUIRE(poller.ok());
  return std::move(poller).value();
}

void push_tag(Pair& p, std::uint64_t tag) {
  SubmitEntry e;
  e.opcode = static_cast<std::uint32_t>(RingOp::Submit);
  e.tag = tag;
  while (!p.submit.try_push(e)) std::this_thread::yield();  // full: the poller drains it
}

TEST_CASE("entries of several rings each reach the handler once and in order", "[wire][poller]") {
  RecordingHandler handler;
  auto poller = start_poller(handler, 2);
  std::vector<Pair> pairs;
  for (std::uint64_t owner = 0; owner < 3; ++owner) {
    pairs.push_back(make_pair(owner));
    REQUIRE(poller->add(pairs.back().served).ok());
  }
  CHECK(poller->size() == 3);
  constexpr std::uint64_t kEach = 2000;
  std::vector<std::thread> clients;
  for (auto& p : pairs)
    clients.emplace_back([&p] {
      for (std::uint64_t i = 0; i < kEach; ++i) push_tag(p, i);
    });
  for (auto& c : clients) c.join();
  for (std::uint64_t owner = 0; owner < 3; ++owner) {
    REQUIRE(handler.wait_for_count(owner, kEach));
    const auto seen = handler.seen(owner);
    REQUIRE(seen.size() == kEach);
    for (std::uint64_t i = 0; i < kEach; ++i) REQUIRE(seen[i] == i);
  }
  for (auto& p : pairs) poller->remove(*p.served);
  CHECK(poller->size() == 0);
}

TEST_CASE("a poller asleep on every doorbell wakes for a push", "[wire][poller]") {
  RecordingHandler handler;
  // A sleep that no timeout ends within the test: the thread wakes only for the push
  // (with a short one it wakes now and then, counting itself out while it spins).
  auto poller = start_poller(handler, 1, false, 60'000ms);
  Pair a = make_pair(0);
  Pair b = make_pair(1);
  REQUIRE(poller->add(a.served).ok());
  REQUIRE(poller->add(b.served).ok());
  // Idle: the thread counts itself a sleeper on both rings' doorbells and sleeps.
  const auto asleep_on_both = [&] {
    return a.client.submissions().bell->sleepers.load() == 1 && b.client.submissions().bell->sleepers.load() == 1;
  };
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!asleep_on_both() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(asleep_on_both());
  push_tag(b, 42);
  REQUIRE(handler.wait_for_count(1, 1));
  CHECK(handler.seen(1) == std::vector<std::uint64_t>{42});
  CHECK(handler.seen(0).empty());
  poller->remove(*a.served);
  poller->remove(*b.served);
}

TEST_CASE("a ring with an impossible index is reported once and dropped; the others go on", "[wire][poller]") {
  RecordingHandler handler;
  auto poller = start_poller(handler, 1);
  Pair bad = make_pair(0, {4, 4});
  Pair good = make_pair(1);
  REQUIRE(poller->add(bad.served).ok());
  REQUIRE(poller->add(good.served).ok());
  bad.client.submissions().tail->value.store(1000);  // claims 1,000 entries in a queue of 4
  bad.client.submissions().bell->sequence.fetch_add(1);
  futex_wake_all(bad.client.submissions().bell->sequence);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (handler.corrupt().empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  CHECK(handler.corrupt() == std::vector<std::uint64_t>{0});
  CHECK(poller->size() == 1);
  push_tag(good, 7);
  REQUIRE(handler.wait_for_count(1, 1));
  CHECK(handler.seen(0).empty());
  CHECK(handler.corrupt().size() == 1);
  poller->remove(*bad.served);  // the owner's call still returns
  poller->remove(*good.served);
}

TEST_CASE("remove() returns only after the ring's running handler returned", "[wire][poller]") {
  RecordingHandler handler;
  auto poller = start_poller(handler, 1);
  Pair p = make_pair(3);
  REQUIRE(poller->add(p.served).ok());
  handler.hold(3);
  push_tag(p, 1);
  REQUIRE(handler.wait_until_held());
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    poller->remove(*p.served);
    removed = true;
  });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(removed.load());  // the handler is still inside
  handler.release();
  remover.join();
  CHECK(removed.load());
  push_tag(p, 2);  // no longer served
  std::this_thread::sleep_for(20ms);
  CHECK(handler.seen(3) == std::vector<std::uint64_t>{1});
}

TEST_CASE("a poller serving as many rings as it can refuses one more with Busy", "[wire][poller]") {
  RecordingHandler handler;
  auto poller = start_poller(handler, 1);
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < RingPoller::kRingsPerThread; ++i) {
    pairs.push_back(make_pair(4, {2, 2}));
    REQUIRE(poller->add(pairs.back().served).ok());
  }
  Pair extra = make_pair(5, {2, 2});
  const Status refused = poller->add(extra.served);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.kind() == ErrorKind::Busy);
  push_tag(pairs.back(), 9);  // the last ring is served like the first
  REQUIRE(handler.wait_for_count(4, 1));
  for (auto& p : pairs) poller->remove(*p.served);
}


// Counts on_idle() calls (the hook accordd uses to look at its GPUs' completion words).
class IdleCountingHandler final : public RingHandler {
 public:
  void on_entry(ServedRing&, const SubmitEntry&) noexcept override { entries.fetch_add(1); }
  void on_corrupt(ServedRing&) noexcept override {}
  void on_idle() noexcept override { idles.fetch_add(1); }
  std::atomic<int> entries{0};
  std::atomic<long> idles{0};
};

TEST_CASE("a poller calls on_idle while it spins after an entry, and not once asleep", "[wire][poller]") {
  IdleCountingHandler handler;
  auto poller = start_poller(handler, 1);  // spins 20 us after its last entry
  Pair p = make_pair(0);
  REQUIRE(poller->add(p.served).ok());
  // Asleep on the doorbell: on_idle has stopped being called.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.client.submissions().bell->sleepers.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  REQUIRE(p.client.submissions().bell->sleepers.load() == 1);
  const long asleep = handler.idles.load();
  std::this_thread::sleep_for(20ms);
  CHECK(handler.idles.load() == asleep);
  // An entry wakes it; it spins again, calling on_idle, then sleeps once more.
  push_tag(p, 7);
  while (handler.entries.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(handler.entries.load() == 1);
  while (p.client.submissions().bell->sleepers.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  CHECK(handler.idles.load() > asleep);
  poller->remove(*p.served);
}


TEST_CASE("pollers_wanted grows at once under load, shrinks one at a time, and keeps the threads the rings need",
          "[wire][poller]") {
  constexpr std::int64_t kWindow = 20'000'000;  // 20 ms
  const auto busy = [](double cores) { return static_cast<std::int64_t>(cores * kWindow); };
  // Each of 8 busy 90% of the time: all 8 stay (never more than the most).
  CHECK(pollers_wanted(busy(7.2), kWindow, 8, 1, 8) == 8);
  // One thread busy all the time grows to one more than would each be busy half of it.
  CHECK(pollers_wanted(busy(1.0), kWindow, 1, 1, 8) == 3);
  CHECK(pollers_wanted(busy(3.0), kWindow, 2, 1, 8) == 7);
  // Idle: one fewer per window, down to the floor.
  CHECK(pollers_wanted(0, kWindow, 8, 1, 8) == 7);
  CHECK(pollers_wanted(0, kWindow, 1, 1, 8) == 1);
  CHECK(pollers_wanted(0, kWindow, 3, 3, 8) == 3);  // 3 threads' worth of rings
  // One core of work among 8: shrink while the rest would be under 35% busy, to 3.
  std::size_t active = 8;
  for (int window = 0; window < 10; ++window) active = pollers_wanted(busy(1.0), kWindow, active, 1, 8);
  CHECK(active == 3);
  CHECK(pollers_wanted(busy(1.0), kWindow, 3, 1, 8) == 3);  // and stays there
  // Out-of-range input: clamped, never zero.
  CHECK(pollers_wanted(busy(1.0), 0, 5, 1, 8) == 5);
  CHECK(pollers_wanted(0, kWindow, 0, 0, 0) == 1);
  CHECK(pollers_wanted(0, kWindow, 12, 1, 8) == 7);
}

// Burns `per_entry` of CPU in every on_entry, and records tags per owner.
class BusyHandler final : public RingHandler {
 public:
  explicit BusyHandler(std::chrono::microseconds per_entry) : per_entry_(per_entry) {}
  void on_entry(ServedRing& ring, const SubmitEntry& entry) noexcept override {
    const auto until = std::chrono::steady_clock::now() + per_entry_.load();
    while (std::chrono::steady_clock::now() < until) {
    }
    const std::lock_guard lock(mu_);
    seen_[ring.owner].push_back(entry.tag);
  }
  void on_corrupt(ServedRing&) noexcept override {}
  void set_cost(std::chrono::microseconds per_entry) { per_entry_ = per_entry; }
  std::size_t count(std::uint64_t owner) {
    const std::lock_guard lock(mu_);
    return seen_[owner].size();
  }
  std::vector<std::uint64_t> seen(std::uint64_t owner) {
    const std::lock_guard lock(mu_);
    return seen_[owner];
  }

 private:
  std::atomic<std::chrono::microseconds> per_entry_;
  std::mutex mu_;
  std::vector<std::uint64_t> seen_[8];
};

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST_CASE("a poller sized by its work serves from one thread when idle, from more under load, and rings moved "
          "between threads keep their entries in order",
          "[wire][poller]") {
  BusyHandler handler(0us);
  auto poller = start_poller(handler, 4, true);
  std::vector<Pair> pairs;
  for (std::uint64_t owner = 0; owner < 8; ++owner) {
    pairs.push_back(make_pair(owner));
    REQUIRE(poller->add(pairs.back().served).ok());
  }
  CHECK(poller->size() == 8);
  // Idle: the first thread's windows find no work and the set shrinks to one thread.
  REQUIRE(wait_until([&] { return poller->active() == 1; }));
  // Under load (every entry burns 300 us, every ring kept full), the set grows.
  handler.set_cost(300us);
  std::atomic<bool> stop{false};
  std::vector<std::uint64_t> pushed(pairs.size(), 0);
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    clients.emplace_back([&, i] {
      while (!stop.load()) {
        SubmitEntry e;
        e.opcode = static_cast<std::uint32_t>(RingOp::Submit);
        e.tag = pushed[i];
        if (pairs[i].submit.try_push(e)) ++pushed[i];
        std::this_thread::sleep_for(200us);
      }
    });
  const bool grew = wait_until([&] { return poller->active() > 1; });
  std::size_t peak = poller->active();
  wait_until([&] { return (peak = std::max(peak, poller->active())) >= 3; }, 2s);  // let it finish growing
  // Load gone: it shrinks again, handing rings back while their clients still push (how
  // far depends on this machine's speed: sanitizers make each entry cost more).
  handler.set_cost(0us);
  const bool shrank = wait_until([&] { return poller->active() < peak; });
  stop = true;
  for (auto& c : clients) c.join();
  CHECK(grew);
  CHECK(shrank);
  for (std::uint64_t owner = 0; owner < pairs.size(); ++owner) {
    REQUIRE(wait_until([&] { return handler.count(owner) == pushed[owner]; }));
    const std::vector<std::uint64_t> seen = handler.seen(owner);
    for (std::uint64_t i = 0; i < seen.size(); ++i) REQUIRE(seen[i] == i);  // once each, in order
  }
  for (auto& p : pairs) poller->remove(*p.served);
  CHECK(poller->size() == 0);
}

TEST_CASE("a poller sized by its work serves from no more threads than it has rings", "[wire][poller]") {
  BusyHandler handler(300us);  // every entry keeps a thread busy
  auto poller = start_poller(handler, 4, true);
  std::vector<Pair> pairs;
  for (std::uint64_t owner = 0; owner < 2; ++owner) {
    pairs.push_back(make_pair(owner));
    REQUIRE(poller->add(pairs.back().served).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> most{0};
  std::vector<std::thread> clients;
  for (auto& p : pairs)
    clients.emplace_back([&] {
      std::uint64_t tag = 0;
      while (!stop.load()) {
        SubmitEntry e;
        e.opcode = static_cast<std::uint32_t>(RingOp::Submit);
        e.tag = tag;
        if (p.submit.try_push(e)) ++tag;
        std::this_thread::sleep_for(100us);
      }
    });
  // Two rings kept busier than a thread can serve: from its first window on (it starts
  // with every thread), the set is two threads, never more.
  REQUIRE(wait_until([&] { return poller->active() <= 2; }));
  const auto until = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < until) {
    most = std::max(most.load(), poller->active());
    std::this_thread::sleep_for(1ms);
  }
  stop = true;
  for (auto& c : clients) c.join();
  CHECK(most.load() <= 2);
  for (auto& p : pairs) poller->remove(*p.served);
}

TEST_CASE("a poller sized by its work still says Busy only when every thread is full", "[wire][poller]") {
  RecordingHandler handler;
  auto poller = start_poller(handler, 2, true);
  REQUIRE(wait_until([&] { return poller->active() == 1; }));  // idle, no ring: one thread serves
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < 2 * RingPoller::kRingsPerThread; ++i) {
    pairs.push_back(make_pair(4, {2, 2}));
    REQUIRE(poller->add(pairs.back().served).ok());  // the second thread joins when the first is full
  }
  CHECK(poller->active() == 2);
  Pair extra = make_pair(5, {2, 2});
  const Status refused = poller->add(extra.served);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.kind() == ErrorKind::Busy);
  std::this_thread::sleep_for(30ms);  // idle windows: the rings need both threads, so both stay
  CHECK(poller->active() == 2);
  push_tag(pairs.back(), 9);
  REQUIRE(handler.wait_for_count(4, 1));
  for (auto& p : pairs) poller->remove(*p.served);
}

}  // namespace
}  // namespace accord::wire
