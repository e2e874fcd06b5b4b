// RingPoller (proto/wire/ring_poller.h): every entry of every ring reaches the handler
// once and in order, a sleeping poller wakes for a push, a corrupt ring is dropped while
// the others go on, remove() waits out a running handler, a full poller says Busy, and
// on_idle is called while a poller spins, never while it sleeps.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/wire/ring_poller.h"

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

std::unique_ptr<RingPoller> start_poller(RingHandler& handler, std::size_t threads) {
  RingPollerOptions options;
  options.threads = threads;
  options.spin = 20us;
  options.max_sleep = 50ms;
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
  auto poller = start_poller(handler, 1);
  Pair a = make_pair(0);
  Pair b = make_pair(1);
  REQUIRE(poller->add(a.served).ok());
  REQUIRE(poller->add(b.served).ok());
  // Idle: the thread counts itself a sleeper on both rings' doorbells and sleeps.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (b.client.submissions().bell->sleepers.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  REQUIRE(b.client.submissions().bell->sleepers.load() == 1);
  REQUIRE(a.client.submissions().bell->sleepers.load() == 1);
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

}  // namespace
}  // namespace accord::wire
