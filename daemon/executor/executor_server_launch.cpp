// ExecutorServer's hot path: the command consumer thread and the completion sinks. The
// consumer spins briefly between commands and then sleeps on the command doorbell; when
// the real device completes by polling (CUDA's flags) it polls it while it spins, which
// is where a completion is seen soonest.
#include <algorithm>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "daemon/executor/executor_server.h"
#include "client/api/spare_core_probe.h"
#include "client/api/thread_name.h"

namespace accord::executor {
namespace {

constexpr auto kSpin = std::chrono::microseconds(50);
constexpr auto kIdleSleep = std::chrono::milliseconds(20);
constexpr auto kPollingSleep = std::chrono::microseconds(200);
constexpr std::size_t kMaxWaits = 4096;
constexpr std::uint32_t kRingLooks = 4;

}  // namespace

void ExecutorServer::SlotSink::on_done() noexcept { server->complete(*this, Outcome::Done, nullptr); }
void ExecutorServer::SlotSink::on_error(Status status) noexcept { server->complete(*this, Outcome::Error, &status); }
void ExecutorServer::SlotSink::on_cancelled() noexcept { server->complete(*this, Outcome::Cancelled, nullptr); }

void ExecutorServer::complete(SlotSink& sink, Outcome outcome, const Status* error) noexcept {
  CompletionRecord record;
  record.region = sink.region;
  record.slot = sink.slot;
  record.launch = sink.launch;
  record.outcome = static_cast<std::uint32_t>(outcome);
  while (completion_lock_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  // accordd's completion thread drains continuously; a full queue is a pause, not a
  // loss (and if accordd is gone, PR_SET_PDEATHSIG ends us). Waited for before the
  // message is written: when full, the next position is still the oldest entry's.
  bool corrupt = false;
  while (completions_.full() && !(corrupt = completions_.corrupt())) std::this_thread::yield();
  if (!corrupt) {
    if (error != nullptr && !error->ok()) {
      // Beside the record, at the position it is pushed to (the lock keeps it ours).
      record.error_kind = static_cast<std::uint32_t>(error->kind());
      const std::size_t bytes = std::min(error->message().size(), kCompletionMessageBytes);
      std::memcpy(channel_.completion_message(completions_.next_position()).text, error->message().data(), bytes);
      record.message_bytes = static_cast<std::uint32_t>(bytes);
    }
    static_cast<void>(completions_.try_push(record));
  }
  completion_lock_.clear(std::memory_order_release);
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  sink.in_flight.store(false, std::memory_order_release);  // the slot may be launched again
}

void ExecutorServer::consume() noexcept {
  name_this_thread("exec-consume");
  wire::RingConsumer<CommandEntry> commands(channel_.commands());
  const bool polls = polls_;
  CommandEntry entry;
  auto last_command = std::chrono::steady_clock::now();
  std::uint32_t spins = 0;
  SpareCoreProbe cores;
  while (!stop_.load(std::memory_order_acquire)) {
    const wire::PopResult popped = commands.try_pop(entry);
    if (popped == wire::PopResult::Corrupt) {
      on_device_lost(device_lost_error(label_ + ": accordd's command queue is corrupt"));
      return;
    }
    if (popped == wire::PopResult::Ok) {
      if (entry.opcode == static_cast<std::uint16_t>(CommandOp::Launch)) launch(entry, commands);
      last_command = std::chrono::steady_clock::now();
      continue;
    }
    // Spinning answers a launch sooner only while accordd's launching thread has a core
    // of its own: with many tenants (an executor each) every core is taken, and a
    // spinning consumer per executor is what keeps the launchers off them. The probe is
    // refreshed on the way to each sleep, never while a command may be waiting.
    if (polls && in_flight_.load(std::memory_order_acquire) > 0) {
      // Work in flight on a device that completes by polling: look at it between looks at
      // the ring, tightly for kSpin after the last command, then every kPollingSleep
      // (the device's own completion thread covers the rest). The ring is looked at
      // kRingLooks times as often: a command waiting while this thread sweeps the device
      // is launch latency, where accordd reads completion words without us.
      if (++spins % kRingLooks == 0) device_->poll_completions();
      if (cores.spare() && std::chrono::steady_clock::now() - last_command < kSpin) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      cores.refresh();
      static_cast<void>(commands.wait(std::chrono::nanoseconds(0), kPollingSleep));
    } else {
      cores.refresh();
      static_cast<void>(commands.wait(cores.spare() ? kSpin : std::chrono::microseconds(0), kIdleSleep));
    }
  }
}

void ExecutorServer::launch(const CommandEntry& first, wire::RingConsumer<CommandEntry>& commands) noexcept {
  // Reused across launches: after the first few no launch allocates.
  static thread_local std::vector<devices::RegionWait> waits = [] {
    std::vector<devices::RegionWait> v;
    v.reserve(64);
    return v;
  }();
  static thread_local std::vector<CommandWait> wanted = [] {
    std::vector<CommandWait> v;
    v.reserve(64);
    return v;
  }();
  waits.clear();
  wanted.clear();
  wanted.insert(wanted.end(), first.wait, first.wait + std::min<std::uint32_t>(first.waits, kWaitsPerEntry));
  for (std::uint32_t i = 0; i < first.more && wanted.size() < kMaxWaits; ++i) {
    CommandEntry more;
    // The continuation entries were published right behind the first one.
    while (commands.try_pop(more) == wire::PopResult::Empty) {
      if (stop_.load()) return;
      static_cast<void>(commands.wait(kSpin, kIdleSleep));
    }
    wanted.insert(wanted.end(), more.wait, more.wait + std::min<std::uint32_t>(more.waits, kWaitsPerEntry));
  }
  std::lock_guard lock(objects_mu_);
  const auto found = regions_.find(first.region);
  if (found == regions_.end() || first.slot >= found->second->slots) {
    spdlog::error("{}: launch of unknown region {} slot {}", label_, first.region, first.slot);
    return;  // accordd's bug: no sink to report through; its watchdog fails the launch
  }
  Region& region = *found->second;
  for (const CommandWait& w : wanted) {
    const auto before = regions_.find(w.region);
    if (before == regions_.end() || w.slot >= before->second->slots) continue;  // already released: it ended
    waits.push_back({before->second->native.get(), w.slot});
  }
  SlotSink& sink = region.sinks[first.slot];
  // The slot's last launch ended (accordd saw its word) but the device has not reported
  // it yet: it will at its next look, which this thread makes when the device polls.
  if (!await_report(sink, [&] { return stop_.load(std::memory_order_acquire); })) return;
  sink.in_flight.store(true, std::memory_order_relaxed);
  sink.launch = first.launch;
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  // The slot's last launch was reported (the gate above), so its 1 has been seen: the
  // word is cleared here, then the number echoed, and from then on a 1 there is this
  // launch's, which accordd may believe (the device clears it again in launch()).
  if (std::atomic<std::uint32_t>* echo = channel_.launch_echo(first.echo); echo != nullptr && region.words[first.slot]) {
    region.words[first.slot]->store(0, std::memory_order_relaxed);
    echo->store(first.launch, std::memory_order_release);
  }
  device_->launch(*region.native, devices::RegionWaits{first.slot, waits}, sink);
}

}  // namespace accord::executor
