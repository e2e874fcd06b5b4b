// ExecutorServer: the executor process's side of the channel. It owns the real device
// and every object accordd asked it to make (by id), answers control requests on the
// socket, and runs the command consumer thread that launches regions with per-slot
// sinks (made at lower time, so a launch allocates nothing) pushing completions back.
// Thread-safety: run() on the process's main thread; the consumer thread and the
// device's threads (through the sinks) share only the object table (a mutex) and the
// completion producer (a spin lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/api/unique_fd.h"
#include "daemon/devices/device.h"
#include "daemon/executor/completion_words.h"
#include "daemon/executor/executor_channel.h"
#include "daemon/executor/executor_control.h"
#include "daemon/executor/executor_messages.h"

namespace accord::executor {

class ExecutorServer final : private devices::DeviceListener {
 public:
  ExecutorServer(std::unique_ptr<devices::Device> device, ExecutorChannel channel, UniqueFd socket, std::string label);
  // Stops the consumer thread, shuts the device down, then releases regions, code,
  // admissions and memory, in that order (device.h's teardown order).
  ~ExecutorServer();
  ExecutorServer(const ExecutorServer&) = delete;
  ExecutorServer& operator=(const ExecutorServer&) = delete;

  // Serves until accordd hangs up or sends Exit (returns kExecutorExitOk), or the device
  // is lost: then it waits briefly for launches in flight to report, sends "lost", and
  // ends the process at once (a faulted driver may hang in teardown).
  int run();

 private:
  // Reports one launch's end into the completion queue. Preallocated per region slot.
  class SlotSink final : public devices::CompletionSink {
   public:
    void on_done() noexcept override;
    void on_error(Status status) noexcept override;
    void on_cancelled() noexcept override;
    ExecutorServer* server = nullptr;
    std::uint32_t region = 0;
    std::uint32_t slot = 0;
    std::uint32_t launch = 0;  // CommandEntry::launch of the launch in flight in this slot
    // From launch until its report is pushed. accordd may see a launch end by its
    // completion word and launch the slot again before the device here reported it; the
    // device allows one launch per slot, so the consumer waits for this to clear.
    std::atomic<bool> in_flight{false};
  };
  struct Region {
    std::unique_ptr<devices::NativeRegion> native;
    std::uint32_t slots = 0;
    std::unique_ptr<SlotSink[]> sinks;
    // Each slot's completion word in words_ (null: none); cleared here before the echo.
    std::unique_ptr<std::atomic<std::uint32_t>*[]> words;
  };
  struct Admission {
    std::unique_ptr<devices::DeviceMemory> pages;  // accordd's memfd mapped here, or another GPU's export
    std::unique_ptr<devices::AdmittedMemory> view;  // destroyed first (declared last)
  };
  struct Answer {
    Answer(Status error) : status(std::move(error)) {}  // NOLINT: implicit, an error answer
    Answer(Status ok, std::vector<std::byte> bytes, int descriptor = -1)
        : status(std::move(ok)), payload(std::move(bytes)), fd(descriptor) {}
    Status status;
    std::vector<std::byte> payload;
    int fd = -1;  // borrowed: valid while the object lives
  };

  void on_device_lost(Status cause) noexcept override;

  Answer handle(ControlMessage& message);
  Answer allocate(const ControlMessage& message);
  Answer admit(ControlMessage& message);
  Answer load(const ControlMessage& message);
  Answer lower(const ControlMessage& message);
  void release(const ControlMessage& message);

  void consume() noexcept;
  void launch(const CommandEntry& first, wire::RingConsumer<CommandEntry>& commands) noexcept;
  void complete(SlotSink& sink, Outcome outcome, const Status* error) noexcept;
  // Waits until every slot of `region` (released by accordd) has been reported here; on a
  // timeout it leaks the region rather than free what the device may still touch.
  void await_reports(std::unique_ptr<Region>& region) noexcept;
  // Until `sink`'s launch is reported here, looks at the device (or yields); false when
  // `give_up()` said so first.
  template <class GiveUp>
  bool await_report(const SlotSink& sink, GiveUp give_up) noexcept {
    while (sink.in_flight.load(std::memory_order_acquire)) {
      if (give_up()) return false;
      if (polls_) device_->poll_completions();
      else std::this_thread::yield();
    }
    return true;
  }
  [[noreturn]] void report_loss_and_exit();

  std::unique_ptr<devices::Device> device_;
  ExecutorChannel channel_;
  UniqueFd socket_;
  const std::string label_;
  UniqueFd lost_fd_;  // eventfd: the device reported loss

  std::mutex lost_mu_;
  std::optional<Status> lost_cause_;  // guarded by lost_mu_

  std::mutex objects_mu_;
  std::uint32_t next_id_ = 0;  // guarded by objects_mu_
  std::unordered_map<std::uint32_t, std::unique_ptr<devices::DeviceMemory>> memory_;
  std::unordered_map<std::uint32_t, Admission> admissions_;
  std::unordered_map<std::uint32_t, std::unique_ptr<devices::LoadedCode>> code_;
  std::unordered_map<std::uint32_t, std::unique_ptr<Region>> regions_;

  std::atomic_flag completion_lock_ = ATOMIC_FLAG_INIT;
  wire::RingProducer<CompletionRecord> completions_;  // guarded by completion_lock_
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<bool> stop_{false};
  bool polls_ = false;  // the device completes by polling (set before the consumer starts)
  // The device's completion words, mapped here too, so a launch can clear its slot's word
  // and echo its number before the device's launch() even starts (accordd then trusts
  // the word at once). Null when the device has none.
  std::shared_ptr<detail::CompletionWordMapping> words_;
  std::thread consumer_;
};

}  // namespace accord::executor
