// Internals of ExecutorDevice shared by its .cpp files (never included from outside the
// folder): the connection to one executor process and the proxy objects the engine
// holds. A proxy carries the generation of the executor that made it; once that
// executor is gone the proxy is dead, and releasing it sends nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "client/api/unique_fd.h"
#include "daemon/executor/child_process.h"
#include "daemon/executor/completion_words.h"
#include "daemon/executor/executor_channel.h"
#include "daemon/executor/executor_device.h"

namespace accord::executor {

// What every proxy is: an object the executor of one generation made, released there
// when the proxy goes (ExecutorDevice::release sends nothing for a dead generation).
// The one friend of ExecutorDevice among the proxies.
class RemoteObject {
 public:
  RemoteObject(ExecutorDevice& device, ReleaseKind kind, std::uint64_t generation, std::uint32_t id) noexcept
      : device_(device), kind_(kind), generation_(generation), id_(id) {}
  ~RemoteObject() { device_.release(kind_, generation_, id_); }
  RemoteObject(const RemoteObject&) = delete;
  RemoteObject& operator=(const RemoteObject&) = delete;

  const ExecutorDevice* owner() const noexcept { return &device_; }
  std::uint64_t generation() const noexcept { return generation_; }
  std::uint32_t id() const noexcept { return id_; }

 protected:
  ExecutorDevice& device_;

 private:
  const ReleaseKind kind_;
  const std::uint64_t generation_;
  const std::uint32_t id_;
};

namespace detail {

// One executor process and its channel. The command producer is used under the
// device's launch lock, the completion consumer under its consume lock.
struct Connection {
  std::uint64_t generation = 0;
  ChildProcess child;
  UniqueFd socket;
  ExecutorChannel channel;
  wire::RingProducer<CommandEntry> commands;
  wire::RingConsumer<CompletionRecord> completions;
  std::shared_ptr<const CompletionWordMapping> words;   // null when the executor shares none
  std::shared_ptr<const CompletionWordMapping> echoes;  // the channel's launch echoes, mapped apart
  std::atomic<bool> dead{false};
};

class ExecutorMemory final : public devices::DeviceMemory, public RemoteObject {
 public:
  ExecutorMemory(ExecutorDevice& device, std::uint64_t generation, std::uint32_t id, std::size_t bytes,
                 std::uint64_t address, UniqueFd export_fd)
      : RemoteObject(device, ReleaseKind::Memory, generation, id),
        bytes_(bytes),
        address_(address),
        export_fd_(std::move(export_fd)) {}
  std::size_t bytes() const noexcept override { return bytes_; }
  // GPU memory is not mapped into accordd.
  std::byte* host_address() const noexcept override { return nullptr; }
  std::uint64_t device_address() const noexcept override { return address_; }
  int export_fd() const noexcept override { return export_fd_.get(); }

 private:
  const std::size_t bytes_;
  const std::uint64_t address_;
  UniqueFd export_fd_;  // the executor's exported VMM handle (or memfd), ours to close
};

class ExecutorAdmission final : public devices::AdmittedMemory, public RemoteObject {
 public:
  ExecutorAdmission(ExecutorDevice& device, std::uint64_t generation, std::uint32_t id, std::uint64_t address)
      : RemoteObject(device, ReleaseKind::Admission, generation, id), address_(address) {}
  std::uint64_t device_address() const noexcept override { return address_; }

 private:
  const std::uint64_t address_;
};

class ExecutorCode final : public devices::LoadedCode, public RemoteObject {
 public:
  ExecutorCode(ExecutorDevice& device, std::uint64_t generation, std::uint32_t id, std::string name,
               KernelContract contract)
      : RemoteObject(device, ReleaseKind::Code, generation, id), name_(std::move(name)), contract_(std::move(contract)) {}
  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }

 private:
  const std::string name_;
  const KernelContract contract_;
};

// A region lowered by the executor: its id there and one LaunchCell per slot
// (completion_words.h). Whoever claims a slot's launch (a completion record with its
// number, a sweep that read its completion word, the loss sweep, or a launch that found
// the executor gone) reports it, so each launch is reported exactly once.
class ExecutorRegion final : public devices::NativeRegion, public RemoteObject {
 public:
  // `offsets`: the executor's completion word of each slot in `words`, or empty.
  // `echoes`: that executor's channel's launch echoes (ExecutorChannel::launch_echo).
  ExecutorRegion(ExecutorDevice& device, std::uint64_t generation, std::uint32_t id, std::uint32_t slots,
                 std::shared_ptr<const CompletionWordMapping> words, std::shared_ptr<const CompletionWordMapping> echoes,
                 const std::vector<std::uint64_t>& offsets)
      : RemoteObject(device, ReleaseKind::Region, generation, id),
        slots_(slots),
        cells_(new LaunchCell[slots]),
        words_(std::move(words)),
        echoes_(std::move(echoes)) {
    for (std::uint32_t i = 0; i < slots && words_ != nullptr && echoes_ != nullptr && offsets.size() == slots; ++i) {
      if (offsets[i] == kNoCompletionWord) continue;
      LaunchCell& cell = cells_[i];
      cell.word = words_->word(offsets[i]);
      if (cell.word == nullptr) continue;
      cell.watch = device_.watch_.add(cell);
      if (cell.watch < 0) continue;
      cell.echo = echoes_->word(std::uint64_t{static_cast<std::uint32_t>(cell.watch)} * kLaunchEchoStride);
      if (cell.echo == nullptr) {
        device_.watch_.remove(cell.watch);
        cell.watch = -1;
      }
    }
    device_.register_region(*this);
  }
  // Unregistered here, released in the executor by ~RemoteObject after that.
  ~ExecutorRegion() override {
    for (std::uint32_t i = 0; i < slots_; ++i)
      if (cells_[i].watch >= 0) device_.watch_.remove(cells_[i].watch);
    device_.unregister_region(*this);
  }

  std::uint32_t slots() const noexcept { return slots_; }
  std::uint64_t key() const noexcept { return generation() << 32 | id(); }
  LaunchCell& cell(std::uint32_t slot) noexcept { return cells_[slot]; }

 private:
  const std::uint32_t slots_;
  std::unique_ptr<LaunchCell[]> cells_;
  std::shared_ptr<const CompletionWordMapping> words_;   // keeps the cells' words mapped
  std::shared_ptr<const CompletionWordMapping> echoes_;  // and their echoes
};

// A spin lock on an atomic_flag: the launch and consume locks are held for a few
// hundred nanoseconds, where a mutex's possible futex call is the cost to avoid.
class SpinGuard {
 public:
  explicit SpinGuard(std::atomic_flag& flag) noexcept : flag_(flag) {
    for (std::uint32_t spins = 0; flag_.test_and_set(std::memory_order_acquire);) {
      while (flag_.test(std::memory_order_relaxed)) {
        // The consume lock may be held across a sink call; past a short spin, let the
        // holder run (this matters on a 2-core machine).
        if (++spins > 1000) {
          std::this_thread::yield();
        } else {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
    }
  }
  ~SpinGuard() { flag_.clear(std::memory_order_release); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  std::atomic_flag& flag_;
};

}  // namespace detail
}  // namespace accord::executor
