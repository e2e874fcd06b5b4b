// ExecutorDevice: the Device accordd's engine sees for one GPU that a child process
// (a GPU executor, gpu_executor.h) drives. Every call is forwarded: control requests
// over a socket, launches and completions through a shared-memory channel; a supervisor
// thread restarts the executor when it dies, faults or hangs, failing the work that was
// in flight (README.md). Thread-safety: every member is thread-safe, as device.h asks.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
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
#include "daemon/executor/executor_control.h"
#include "daemon/executor/executor_messages.h"
#include "daemon/executor/executor_options.h"

namespace accord::executor {

namespace detail {
struct Connection;
class ExecutorRegion;
}  // namespace detail

class ExecutorDevice final : public devices::Device {
 public:
  // Spawns the executor for `options.ordinal` and waits for its hello. Returns nullptr
  // (no error) when the executor's backend has no device with that ordinal, which is
  // how the composition root finds the last GPU. Errors: the backend's own reason when
  // its factory failed there ("cuda: no driver: ...", Unsupported); Unsupported naming
  // the executor when it could not be started or said no proper hello; Invalid options.
  static Result<std::unique_ptr<ExecutorDevice>> open(ExecutorOptions options);

  // shut_down(), then nothing: proxies (memory, code, regions) must be gone already.
  ~ExecutorDevice() override;
  ExecutorDevice(const ExecutorDevice&) = delete;
  ExecutorDevice& operator=(const ExecutorDevice&) = delete;

  // --- identity: from the first executor's hello; constant across restarts ---
  const devices::DeviceInfo& info() const noexcept override { return hello_.info; }
  std::span<const LaneKind> lanes() const noexcept override { return hello_.lanes; }
  bool supports(MemoryPlacement placement) const noexcept override;
  bool waits_natively() const noexcept override { return hello_.waits_natively; }
  // Never synchronous, whatever the real device is: it reports from another process.
  bool launches_synchronously() const noexcept override { return false; }
  // One control round trip; 0 while the executor is down.
  std::uint64_t free_memory() const noexcept override;

  // --- control requests: one outstanding at a time; DeviceLost while the executor is
  // down or when it dies, hangs (request_timeout) or answers garbage meanwhile ---
  Result<std::unique_ptr<devices::DeviceMemory>> allocate(const devices::AllocationRequest& request) override;
  Result<std::unique_ptr<devices::AdmittedMemory>> admit(const devices::DeviceMemory& memory,
                                                         const devices::DeviceInfo& home) override;
  Result<std::unique_ptr<devices::LoadedCode>> load(const devices::CodeImage& image,
                                                    const KernelContract& contract) override;
  Result<std::unique_ptr<devices::NativeRegion>> lower(const devices::RegionRequest& request) override;

  // --- the hot path: one ring entry (more with many waits) under a short spin lock; no
  // allocation, no system call unless the executor sleeps. A region of an earlier
  // executor reports DeviceLost at once. ---
  void launch(devices::NativeRegion& region, const devices::RegionWaits& waits,
              devices::CompletionSink& sink) noexcept override;
  bool completes_by_polling() const noexcept override { return true; }
  // Reads the completion words of launches in flight, then drains the completion queue,
  // each on the calling thread unless another thread is at it.
  void poll_completions() noexcept override;

  // Stops the supervisor and completion threads, asks the executor to exit, SIGKILLs it
  // after exit_grace, and reaps it. No sink is called after it returns. Idempotent.
  void shut_down() noexcept override;

  // --- for tests and logs ---
  // The executor's pid now; -1 while none runs.
  pid_t executor_pid() const;
  // Bumped by every executor start (1 for the first).
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  std::uint32_t restarts() const noexcept { return restarts_.load(std::memory_order_acquire); }
  // Launches reported because a waiting thread read their completion word, rather than
  // from the executor's completion record.
  std::uint64_t completions_by_word() const noexcept { return completions_by_word_.load(std::memory_order_relaxed); }
  // The last delay the restart limit imposed (0 when none yet).
  std::chrono::milliseconds last_backoff() const noexcept {
    return std::chrono::milliseconds(last_backoff_ms_.load(std::memory_order_acquire));
  }

 private:
  friend class detail::ExecutorRegion;
  friend class RemoteObject;
  using Connection = detail::Connection;

  explicit ExecutorDevice(ExecutorOptions options);

  // Spawns an executor of generation `generation` and awaits its hello (or the wake
  // eventfd: then Cancelled).
  Result<std::shared_ptr<Connection>> start(std::uint64_t generation, HelloInfo& hello);
  void install(std::shared_ptr<Connection> connection);
  void supervise() noexcept;
  void complete_loop() noexcept;
  // Handles one event of the live executor; returns a loss cause when it is lost.
  std::optional<std::string> serve_socket(Connection& connection);
  // `reap_later`: the executor reported its loss (its completions are final): it is
  // killed now and reaped after the restart.
  void handle_loss(const std::shared_ptr<Connection>& connection, const std::string& cause,
                   std::chrono::milliseconds exit_wait, bool reap_later = false) noexcept;
  void restart() noexcept;
  // Asks `connection`'s executor to exit, waits exit_grace, then kills and reaps it.
  void retire(Connection& connection) noexcept;
  // Sleeps up to `limit` or until woken (shut_down, a requested loss). False when stopping.
  bool pause(std::chrono::milliseconds limit) noexcept;
  void wake() const noexcept;
  // From any thread: makes the supervisor treat `generation` as lost with `cause`.
  void request_loss(std::uint64_t generation, std::string cause) noexcept;

  // One control round trip with the live executor of generation `expected` (0: any).
  Result<ControlMessage> request(ControlOp op, std::span<const std::byte> payload, int fd = -1,
                                 std::uint64_t expected = 0);
  // Fire and forget: an object of `generation` is gone (nothing when that executor is).
  void release(ReleaseKind kind, std::uint64_t generation, std::uint32_t id) noexcept;

  // Drains completions of `connection` with the consumer lock held. Returns how many.
  int drain(Connection& connection) noexcept;
  void dispatch(std::uint64_t generation, const struct CompletionRecord& record,
                const struct CompletionMessage& text) noexcept;
  bool push_launch(Connection& connection, detail::ExecutorRegion& region, const devices::RegionWaits& waits,
                   std::uint32_t number, std::uint32_t echo) noexcept;
  Status stale(std::uint64_t generation, const char* what) const;

  void register_region(detail::ExecutorRegion& region);
  void unregister_region(detail::ExecutorRegion& region) noexcept;

  const ExecutorOptions options_;
  const std::string label_;  // "gpu:0 executor"
  HelloInfo hello_;          // the first executor's; identity never changes

  // The live executor's generation; 0 while none runs. Proxies of other generations
  // are dead.
  std::atomic<std::uint64_t> live_generation_{0};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint32_t> restarts_{0};
  std::atomic<std::int64_t> last_backoff_ms_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> shut_down_{false};
  UniqueFd wake_fd_;  // eventfd: wakes the supervisor's poll

  // The live connection, for the supervisor, control requests and the completion thread.
  mutable std::mutex connection_mu_;
  std::shared_ptr<Connection> connection_;  // guarded by connection_mu_
  std::string last_cause_;                  // guarded by connection_mu_

  // The command queue's single producer: launches take this spin lock.
  std::atomic_flag launch_lock_ = ATOMIC_FLAG_INIT;
  Connection* launch_connection_ = nullptr;  // guarded by launch_lock_
  // The completion queue's single consumer: the completion thread and helpers try it.
  std::atomic_flag consume_lock_ = ATOMIC_FLAG_INIT;
  Connection* consume_connection_ = nullptr;  // guarded by consume_lock_

  // The slots with completion words that poll_completions() reads.
  detail::CompletionWatch watch_;
  std::atomic<std::uint64_t> completions_by_word_{0};
  // Launch numbers, unique on this device (never 0): CommandEntry::launch.
  std::atomic<std::uint32_t> next_launch_{1};

  // Regions by (generation << 32 | executor id), for completions and loss.
  std::mutex regions_mu_;
  std::unordered_map<std::uint64_t, detail::ExecutorRegion*> regions_;

  // The one outstanding control request.
  std::mutex control_mu_;
  std::mutex reply_mu_;
  std::condition_variable reply_cv_;
  std::uint32_t next_request_id_ = 0;        // guarded by control_mu_
  std::uint32_t pending_id_ = 0;             // guarded by reply_mu_
  std::optional<Result<ControlMessage>> reply_;  // guarded by reply_mu_

  // A loss asked for by another thread (a request timeout, a corrupt queue).
  std::mutex loss_mu_;
  std::optional<std::pair<std::uint64_t, std::string>> requested_loss_;  // guarded by loss_mu_

  // Supervisor-only state.
  std::deque<std::chrono::steady_clock::time_point> restart_times_;
  std::vector<std::shared_ptr<Connection>> dying_;  // killed after a loss report, reaped after the restart
  std::chrono::milliseconds backoff_{0};

  // The standby executor (ExecutorOptions::standby), started by the spawner thread and
  // taken over by restart(). The spawner is long-lived because PR_SET_PDEATHSIG ties
  // each child to the thread that spawned it.
  std::mutex standby_mu_;
  std::condition_variable standby_cv_;
  std::shared_ptr<Connection> standby_;  // guarded by standby_mu_
  HelloInfo standby_hello_;              // guarded by standby_mu_
  void spawn_standbys() noexcept;
  // Takes the standby if one is ready and still running; its generation becomes `generation`.
  std::shared_ptr<Connection> take_standby(std::uint64_t generation, HelloInfo& hello) noexcept;

  // Drains the completion queue unless another thread is at it (the consume lock).
  void drain_if_free() noexcept;
  // Sweeps the completion words, then drains the queue: what a helper and the completion
  // thread both do.
  void collect() noexcept;
  // Set by helpers' poll_completions(), cleared by the completion thread, which rests
  // while helpers keep setting it.
  std::atomic<bool> helper_polled_{false};
  // The live connection maps the executor's completion words (its hello had an arena).
  std::atomic<bool> words_in_use_{false};

  std::thread supervisor_;
  std::thread completer_;
  std::thread spawner_;
};

}  // namespace accord::executor
