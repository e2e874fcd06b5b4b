// ExecutorDevice's supervision (README.md, "Supervision"): the supervisor thread reads
// the control socket and watches the child's pidfd; a death, a hang-up, a "lost"
// message, garbage or a request timeout makes the executor lost: its in-flight launches
// are failed, the registry is told (report_lost), and a new executor is started within
// the restart limit, after which report_recovered says what was done.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "daemon/executor/executor_device.h"
#include "daemon/executor/executor_device_impl.h"
#include "client/api/thread_name.h"

namespace accord::executor {

using detail::ExecutorRegion;
using detail::SpinGuard;

void ExecutorDevice::wake() const noexcept {
  const std::uint64_t one = 1;
  static_cast<void>(::write(wake_fd_.get(), &one, sizeof(one)));
}

void ExecutorDevice::request_loss(std::uint64_t generation, std::string cause) noexcept {
  {
    std::lock_guard lock(loss_mu_);
    if (!requested_loss_) requested_loss_.emplace(generation, std::move(cause));
  }
  wake();
}

bool ExecutorDevice::pause(std::chrono::milliseconds limit) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!stopping_.load()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    pollfd p{wake_fd_.get(), POLLIN, 0};
    static_cast<void>(::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000))));
    std::uint64_t drained = 0;
    static_cast<void>(::read(wake_fd_.get(), &drained, sizeof(drained)));
  }
  return false;
}

void ExecutorDevice::retire(Connection& connection) noexcept {
  if (!connection.child.running()) return;
  connection.dead.store(true);
  static_cast<void>(send_control(connection.socket.get(), ControlOp::Exit, 0, 0, {}));
  const std::string ended = connection.child.stop(options_.exit_grace);
  spdlog::info("{}: {} (pid {}) shut down; it {}", hello_.info.name, label_, connection.child.pid(), ended);
}

void ExecutorDevice::supervise() noexcept {
  name_this_thread("exec-supervise");
  // On the way out this thread asks its executor to exit and reaps it: it spawned every
  // restarted executor, and PR_SET_PDEATHSIG would kill those the moment it ends.
  struct RetireOnExit {
    ExecutorDevice* device;
    ~RetireOnExit() {
      std::shared_ptr<Connection> connection;
      {
        std::lock_guard lock(device->connection_mu_);
        connection = device->connection_;
      }
      if (connection) {
        device->live_generation_.store(0, std::memory_order_seq_cst);
        device->retire(*connection);
      }
      for (const std::shared_ptr<Connection>& old : device->dying_)
        static_cast<void>(old->child.stop(device->options_.exit_grace));
      device->dying_.clear();
    }
  } retire_on_exit{this};
  while (!stopping_.load()) {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(connection_mu_);
      connection = connection_;
    }
    if (!connection) {
      restart();
      continue;
    }
    pollfd fds[3] = {{connection->socket.get(), POLLIN, 0},
                     {wake_fd_.get(), POLLIN, 0},
                     {connection->child.pidfd(), POLLIN, 0}};
    const int n = ::poll(fds, connection->child.pidfd() >= 0 ? 3 : 2, 1000);
    if (stopping_.load()) return;
    if (n < 0) continue;  // EINTR
    if (fds[1].revents != 0) {
      std::uint64_t drained = 0;
      static_cast<void>(::read(wake_fd_.get(), &drained, sizeof(drained)));
      std::optional<std::pair<std::uint64_t, std::string>> asked;
      {
        std::lock_guard lock(loss_mu_);
        asked.swap(requested_loss_);
      }
      if (asked && asked->first == connection->generation) {
        handle_loss(connection, asked->second, std::chrono::milliseconds(0));
        continue;
      }
    }
    // The socket before the pidfd: an executor that reported its loss and exited has
    // its "lost" message (the cause) waiting there.
    if (fds[0].revents != 0) {
      if (std::optional<std::string> cause = serve_socket(*connection)) {
        // A loss report comes after the executor flushed its completions, so its queue
        // is final: it is killed at once and reaped after the restart (a faulted CUDA
        // process takes about 0.3 s to end), which does not wait for that.
        const bool told = cause->starts_with("reported");
        handle_loss(connection, *cause, std::chrono::milliseconds(told ? 0 : 200), told);
        continue;
      }
    }
    if (connection->child.pidfd() >= 0 && fds[2].revents != 0) handle_loss(connection, "died", std::chrono::milliseconds(0));
  }
}

std::optional<std::string> ExecutorDevice::serve_socket(Connection& connection) {
  auto received = receive_control(connection.socket.get());
  if (!received.ok()) {
    if (received.status().kind() == ErrorKind::Busy) return std::nullopt;  // nothing there after all
    return "sent a malformed message: " + std::string(received.status().message());
  }
  if (!received->has_value()) return std::string("closed its channel");
  ControlMessage& message = **received;
  switch (message.op) {
    case ControlOp::Reply: {
      std::lock_guard lock(reply_mu_);
      // A late answer to a request that already timed out is dropped.
      if (message.request_id != 0 && message.request_id == pending_id_ && !reply_) {
        reply_.emplace(std::move(message));
        reply_cv_.notify_all();
      }
      return std::nullopt;
    }
    case ControlOp::Lost: {
      auto lost = decode_lost(message.payload, label_);
      if (!lost.ok()) return "sent a malformed loss report: " + std::string(lost.status().message());
      return "reported the device lost: " + lost->message;
    }
    default:
      return std::string("sent an unexpected '") + to_string(message.op) + "' message";
  }
}

void ExecutorDevice::handle_loss(const std::shared_ptr<Connection>& connection, const std::string& cause,
                                 std::chrono::milliseconds exit_wait, bool reap_later) noexcept {
  // 1. No launch of this generation starts from here on, and none is half pushed.
  live_generation_.store(0, std::memory_order_seq_cst);
  connection->dead.store(true, std::memory_order_seq_cst);
  {
    SpinGuard launch(launch_lock_);
    launch_connection_ = nullptr;
  }
  // 2. The executor ends (by itself after a loss report, which it sends once its
  //    completions are flushed), so its completion queue is final.
  const pid_t pid = connection->child.pid();
  std::string ended;
  if (reap_later) {
    static_cast<void>(::kill(pid, SIGKILL));
    ended = "was killed (reaped once the GPU is back)";
    dying_.push_back(connection);
  } else {
    ended = connection->child.stop(exit_wait);
  }
  const std::string full = label_ + " (pid " + std::to_string(pid) + ") " + cause + "; it " + ended;
  spdlog::error("{}: lost: {}", hello_.info.name, full);
  {
    std::lock_guard lock(connection_mu_);
    last_cause_ = full;
  }
  // 3. What it reported before it ended reaches its sinks first: the faulting graph gets
  //    its own Execution error.
  {
    SpinGuard consume(consume_lock_);
    static_cast<void>(drain(*connection));
    consume_connection_ = nullptr;
  }
  report_lost(device_lost_error(hello_.info.name + ": " + full));
  // 4. Everything else that was in flight on it.
  std::vector<devices::CompletionSink*> orphans;
  {
    std::lock_guard lock(regions_mu_);
    for (auto& [key, region] : regions_) {
      if (region->generation() != connection->generation) continue;
      for (std::uint32_t slot = 0; slot < region->slots(); ++slot)
        if (devices::CompletionSink* sink = region->cell(slot).claim_any())
          orphans.push_back(sink);
    }
  }
  if (!orphans.empty()) spdlog::warn("{}: failing {} launches in flight on it", hello_.info.name, orphans.size());
  for (devices::CompletionSink* sink : orphans)
    sink->on_error(device_lost_error(hello_.info.name + ": lost while the launch was in flight: " + full));
  // 5. A control request waiting for an answer gets none.
  {
    std::lock_guard lock(reply_mu_);
    if (pending_id_ != 0 && !reply_) {
      reply_.emplace(device_lost_error(hello_.info.name + ": " + full));
      reply_cv_.notify_all();
    }
  }
  {
    std::lock_guard lock(connection_mu_);
    if (connection_ == connection) connection_.reset();
  }
  {
    std::lock_guard lock(loss_mu_);
    if (requested_loss_ && requested_loss_->first == connection->generation) requested_loss_.reset();
  }
}

void ExecutorDevice::restart() noexcept {
  std::string cause;
  {
    std::lock_guard lock(connection_mu_);
    cause = last_cause_;
  }
  const auto now = std::chrono::steady_clock::now();
  while (!restart_times_.empty() && now - restart_times_.front() > options_.restart_window) restart_times_.pop_front();
  if (restart_times_.size() >= options_.max_restarts) {
    backoff_ = backoff_.count() == 0 ? options_.backoff_initial : std::min(backoff_ * 2, options_.backoff_max);
    last_backoff_ms_.store(backoff_.count());
    spdlog::warn("{}: {} restarts in the last {} ms; waiting {} ms before the next", hello_.info.name,
                 restart_times_.size(), options_.restart_window.count(), backoff_.count());
    if (!pause(backoff_)) return;
  } else {
    backoff_ = std::chrono::milliseconds(0);
  }
  if (stopping_.load()) return;
  restart_times_.push_back(std::chrono::steady_clock::now());
  const std::uint64_t generation = generation_.load() + 1;
  HelloInfo hello;
  Result<std::shared_ptr<Connection>> started = take_standby(generation, hello);
  if (*started == nullptr) started = start(generation, hello);
  if (started.ok() && (!hello.error.empty() || !hello.has_device || hello.info.uuid != hello_.info.uuid)) {
    // A different GPU under the same ordinal (the driver renumbered them) must not take
    // over this device's identity.
    const std::string why = !hello.error.empty() ? hello.error
                            : !hello.has_device  ? "no longer has the device"
                                                 : "now serves another GPU (uuid " + hello.info.uuid + ", was " +
                                                       hello_.info.uuid + ")";
    static_cast<void>((*started)->child.stop(options_.exit_grace));
    started = unsupported_error(label_ + " (pid " + std::to_string((*started)->child.pid()) + "): " + why);
  }
  if (!started.ok()) {
    // Counted against the limit like any restart: a GPU that cannot start is retried
    // with the same backoff as one that faults at once.
    generation_.store(generation);
    spdlog::error("{}: restart failed: {}", hello_.info.name, started.status().message());
    std::lock_guard lock(connection_mu_);
    last_cause_ = std::string(started.status().message());
    return;
  }
  const pid_t pid = (*started)->child.pid();
  install(std::move(started).value());
  restarts_.fetch_add(1);
  const std::string how = "executor restarted (pid " + std::to_string(pid) + ") after: " + cause;
  spdlog::info("{}: recovered: {}", hello_.info.name, how);
  report_recovered(how);
  for (const std::shared_ptr<Connection>& old : dying_) {
    const std::string ended = old->child.stop(options_.exit_grace);
    spdlog::info("{}: {} (pid {}) {}", hello_.info.name, label_, old->child.pid(), ended);
  }
  dying_.clear();
}

std::shared_ptr<ExecutorDevice::Connection> ExecutorDevice::take_standby(std::uint64_t generation,
                                                                         HelloInfo& hello) noexcept {
  std::shared_ptr<Connection> taken;
  {
    std::lock_guard lock(standby_mu_);
    taken.swap(standby_);
    hello = standby_hello_;
  }
  standby_cv_.notify_all();  // the spawner starts the next one
  if (taken == nullptr) return nullptr;
  if (taken->child.try_reap()) {  // it died while waiting: start a fresh one instead
    spdlog::warn("{}: the standby executor (pid {}) had ended; starting a new one", hello_.info.name,
                 taken->child.pid());
    return nullptr;
  }
  taken->generation = generation;
  return taken;
}

void ExecutorDevice::spawn_standbys() noexcept {
  name_this_thread("exec-standby");
  while (!stopping_.load()) {
    {
      std::unique_lock lock(standby_mu_);
      standby_cv_.wait(lock, [&] { return stopping_.load() || standby_ == nullptr; });
      if (stopping_.load()) break;
    }
    HelloInfo hello;
    auto started = start(0, hello);  // the generation is set when it takes over
    if (started.ok() && (!hello.error.empty() || !hello.has_device || hello.info.uuid != hello_.info.uuid)) {
      static_cast<void>((*started)->child.stop(options_.exit_grace));
      started = unsupported_error("it does not serve " + hello_.info.name);
    }
    if (!started.ok()) {
      if (stopping_.load()) break;
      spdlog::warn("{}: the standby executor did not start: {}; retrying in {} ms", hello_.info.name,
                   started.status().message(), options_.backoff_initial.count());
      std::unique_lock lock(standby_mu_);
      standby_cv_.wait_for(lock, options_.backoff_initial, [&] { return stopping_.load(); });
      continue;
    }
    spdlog::info("{}: standby executor ready (pid {})", hello_.info.name, (*started)->child.pid());
    std::lock_guard lock(standby_mu_);
    standby_ = std::move(started).value();
    standby_hello_ = std::move(hello);
  }
  // Retired by this thread: PR_SET_PDEATHSIG would kill it as this thread ends anyway.
  std::shared_ptr<Connection> left;
  {
    std::lock_guard lock(standby_mu_);
    left.swap(standby_);
  }
  if (left) retire(*left);
}

void ExecutorDevice::shut_down() noexcept {
  if (shut_down_.exchange(true)) return;
  stopping_.store(true);
  wake();
  {
    std::lock_guard lock(standby_mu_);  // the spawner is waiting or will see stopping_
  }
  standby_cv_.notify_all();
  if (spawner_.joinable()) spawner_.join();
  if (supervisor_.joinable()) supervisor_.join();
  if (completer_.joinable()) completer_.join();
  live_generation_.store(0, std::memory_order_seq_cst);
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(connection_mu_);
    connection.swap(connection_);
  }
  {
    SpinGuard launch(launch_lock_);
    launch_connection_ = nullptr;
  }
  {
    SpinGuard consume(consume_lock_);
    consume_connection_ = nullptr;
  }
  {
    std::lock_guard lock(reply_mu_);
    if (pending_id_ != 0 && !reply_) {
      reply_.emplace(device_lost_error(hello_.info.name + ": " + label_ + " shut down"));
      reply_cv_.notify_all();
    }
  }
  // Normally the supervisor retired it already; this covers a device whose supervisor
  // never started.
  if (connection) retire(*connection);
}

}  // namespace accord::executor
