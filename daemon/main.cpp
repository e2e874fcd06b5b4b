// accordd, the daemon executable: flags over the config file (daemon/config), spdlog to
// stderr (the journal under systemd), signals on one sigwait thread, sd_notify, and an
// accord::service::Daemon that serves until SIGTERM or SIGINT. run_daemon() shows the
// startup and shutdown order in one place (STYLE.md rule 7).
// `accordd --gpu-executor N` runs one GPU's executor instead (run_executor below).
// Exit status: 0 after a clean stop, and for --help, --version and a valid
// --check-config; 1 when the daemon cannot start; 2 for bad flags or a bad config.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "daemon/config/accordd_config.h"
#include "daemon/devices/composition/open_devices.h"
#include "daemon/executor/gpu_executor.h"
#include "daemon/executor/open_gpu_executors.h"
#include "daemon/service/daemon.h"

namespace {

namespace config = accord::daemon_config;
using accord::service::Daemon;

constexpr int kExitOk = 0;
constexpr int kExitStartFailed = 1;
constexpr int kExitBadConfig = 2;

// Sent by the shutdown path to end the signal thread's sigwait loop. It is blocked with
// the others, so from anyone else it is logged and ignored rather than fatal.
constexpr int kWakeSignal = SIGUSR1;

// The signals accordd takes synchronously, on one thread. main blocks them before any
// thread exists, so every thread inherits the mask and no handler ever runs.
sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP, kWakeSignal}) sigaddset(&set, s);
  return set;
}

// --- logging ---

// systemd sets JOURNAL_STREAM=<dev>:<inode> when stderr is a journal stream. Then the
// journal adds timestamps, and a "<N>" prefix gives each line its priority.
bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  unsigned long long dev = 0, ino = 0;
  if (!env || std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

class JournalPriority final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string_view prefix = SD_INFO;
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: prefix = SD_DEBUG; break;
      case spdlog::level::warn: prefix = SD_WARNING; break;
      case spdlog::level::err: prefix = SD_ERR; break;
      case spdlog::level::critical: prefix = SD_CRIT; break;
      default: break;
    }
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JournalPriority>(); }
};

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::Trace: return spdlog::level::trace;
    case config::LogLevel::Debug: return spdlog::level::debug;
    case config::LogLevel::Info: return spdlog::level::info;
    case config::LogLevel::Warn: return spdlog::level::warn;
    case config::LogLevel::Error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

// The default logger, which the service logs through too. Built by hand rather than
// with spdlog::stderr_color_mt, whose registry throws on a duplicate name.
void init_logging() {
  auto logger = std::make_shared<spdlog::logger>("accordd", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  if (stderr_is_journal()) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JournalPriority>('*').set_pattern("%*%v");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  }
  spdlog::set_default_logger(std::move(logger));
}

// --- the signal thread ---

// Takes the handled signals with sigwait: SIGTERM and SIGINT stop the daemon (once;
// repeats are logged), SIGHUP is answered with a log line. Owner thread only.
class SignalThread {
 public:
  explicit SignalThread(Daemon& daemon) : daemon_(&daemon), thread_([this] { run(); }) {}
  ~SignalThread() { stop(); }
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

  // Later signals are still taken and logged but no longer reach the daemon, which may
  // then be destroyed.
  void detach_daemon() {
    std::lock_guard lock(mu_);
    daemon_ = nullptr;
  }
  // Ends the loop and joins. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      exiting_ = true;
    }
    pthread_kill(thread_.native_handle(), kWakeSignal);
    thread_.join();
  }

 private:
  void run() {
    const sigset_t set = handled_signals();
    bool stopping = false;
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0) continue;
      std::lock_guard lock(mu_);
      if (signal == SIGTERM || signal == SIGINT) {
        const char* name = signal == SIGTERM ? "SIGTERM" : "SIGINT";
        if (stopping) {
          spdlog::warn("{}: already stopping; waiting for in-flight work to drain", name);
          continue;
        }
        stopping = true;
        spdlog::info("{}: stopping: refusing new sessions and draining in-flight work", name);
        sd_notify(0, "STOPPING=1\nSTATUS=Draining in-flight work");
        if (daemon_) daemon_->request_stop();
      } else if (signal == SIGHUP) {
        spdlog::warn("SIGHUP: reload not supported; restart to apply config");
      } else if (exiting_) {
        return;
      } else {
        spdlog::info("ignoring signal {}", signal);
      }
    }
  }

  std::mutex mu_;
  Daemon* daemon_;  // guarded by mu_
  bool exiting_ = false;  // guarded by mu_
  std::thread thread_;  // last: run() uses the members above
};

// --- the watchdog thread ---

// Sends WATCHDOG=1 every WATCHDOG_USEC/2 when the unit sets WatchdogSec=; otherwise
// starts no thread. Each ping first asks the daemon something that takes its locks, so
// a daemon wedged on a lock stops the pings and systemd restarts it. During the drain
// the daemon is detached and the pings go on: a long drain is bounded by systemd's
// TimeoutStopSec, not mistaken for a hang. Owner thread only.
class Watchdog {
 public:
  explicit Watchdog(const Daemon& daemon) : daemon_(&daemon) {
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
    period_ = std::chrono::microseconds(usec / 2);
    thread_ = std::thread([this] { run(); });
  }
  ~Watchdog() { stop(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool enabled() const { return thread_.joinable(); }
  std::chrono::microseconds period() const { return period_; }
  // Blocks while a probe is running (if the daemon is wedged, until systemd kills us).
  void detach_daemon() {
    std::lock_guard lock(probe_mu_);
    daemon_ = nullptr;
  }
  // Ends the pings and joins. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, period_, [this] { return stopping_; })) {
      lock.unlock();
      {
        std::lock_guard probe(probe_mu_);
        if (daemon_) static_cast<void>(daemon_->session_count());
      }
      sd_notify(0, "WATCHDOG=1");
      lock.lock();
    }
  }

  std::mutex probe_mu_;
  const Daemon* daemon_;  // guarded by probe_mu_
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::chrono::microseconds period_{0};
  std::thread thread_;
};

// Admission is easy to get wrong in both directions; say what this config allows.
void log_access(const accord::service::DaemonConfig& d) {
  if (d.allow_all_users) {
    spdlog::warn("allow_all_users: any user who can reach {} may connect (socket mode {:04o})", d.grpc_socket,
                 d.socket_mode);
  } else if (d.allowed_uids.empty() && d.allowed_gids.empty()) {
    spdlog::warn("only root and uid {} may connect: set allowed_uids or allowed_gids (or allow_all_users)",
                 getuid());
  }
}

// The daemon's life. Startup: the service, then the threads that serve it, then READY.
// Shutdown, after SIGTERM or SIGINT, undoes it in reverse.
int run_daemon(const config::AccorddConfig& config) {
  // 1. The service: devices (logged) and engine, gRPC server, session channel, and last
  //    the two sockets. Clients can connect once start() returns.
  auto started = Daemon::start(config.daemon);
  if (!started.ok()) {
    spdlog::critical("cannot start: {}", started.status().to_string());
    return kExitStartFailed;
  }
  std::unique_ptr<Daemon> daemon = std::move(started).value();

  // 2. Signals. A SIGTERM that arrived during step 1 was held (blocked since main
  //    began) and is taken now, so it stops the daemon as if it came later.
  SignalThread signals(*daemon);

  // 3. Watchdog pings, when the unit asks for them.
  Watchdog watchdog(*daemon);

  // 4. Ready (Type=notify: units ordered after accordd start now).
  sd_notifyf(0, "READY=1\nSTATUS=Serving on %s and %s", config.daemon.grpc_socket.c_str(),
             config.daemon.session_socket.c_str());
  if (watchdog.enabled()) spdlog::debug("watchdog: pinging every {} ms", watchdog.period().count() / 1000);
  spdlog::info("ready");

  // Serve until the signal thread, on SIGTERM or SIGINT, sends STOPPING=1 and calls
  // request_stop().
  daemon->wait_until_stopped();

  // Shutdown, steps 4 to 1 reversed (4 needs nothing: STOPPING=1 is sent):
  // 3. The watchdog stops probing the daemon but keeps pinging through the drain.
  watchdog.detach_daemon();
  // 2. Further signals are logged only.
  signals.detach_daemon();
  // 1. The service stops (Daemon::~Daemon): stop accepting, refuse new sessions, close
  //    sessions while in-flight work drains, stop gRPC, stop the engine, close devices.
  daemon.reset();
  // Then the threads of steps 3 and 2.
  watchdog.stop();
  signals.stop();
  spdlog::info("stopped");
  return kExitOk;
}

// `accordd --gpu-executor N --executor-fd FD ...`: the child accordd spawns for GPU N
// (daemon/executor). It serves that GPU to its parent and nothing else: no config file,
// no sockets, no signal thread (SIGTERM ends it; PR_SET_PDEATHSIG ends it with accordd).
int run_executor(const accord::executor::ExecutorArgs& args) {
  init_logging();  // its messages name "gpu:N executor (pid P)" themselves
  return accord::executor::run_gpu_executor(accord::devices::built_catalog(), args);
}

int run_main(int argc, char** argv) {
  auto executor = accord::executor::parse_executor_args(argc, argv);
  if (!executor.ok()) {
    std::fprintf(stderr, "accordd: %s\n", std::string(executor.status().message()).c_str());
    return kExitBadConfig;
  }
  if (executor->has_value()) return run_executor(**executor);

  // Before any thread exists (gRPC and the engine start theirs in Daemon::start), so
  // the mask is inherited by all of them and only the signal thread takes these.
  const sigset_t signals = handled_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A client that hangs up while we write to it is EPIPE on that socket, not our death.
  std::signal(SIGPIPE, SIG_IGN);

  init_logging();
  auto loaded = config::load_config(argc, argv);
  if (!loaded.ok()) {
    spdlog::error("{}", loaded.status().message());
    return kExitBadConfig;
  }
  // GPU executors (gpu_executors = true) are opened by the executor library, which the
  // device layer does not link: accordd hands it the factory.
  loaded->daemon.device_settings.gpu_executor_factory = &accord::executor::open_gpu_executors_factory;
  const config::AccorddConfig& config = *loaded;
  if (config.print_and_exit) {
    std::fputs(config.print_and_exit->c_str(), stdout);
    return kExitOk;
  }
  // The service's own checks, ahead of start() so that --check-config reports them too.
  if (accord::Status valid = config.daemon.validate(); !valid.ok()) {
    spdlog::error("invalid configuration{}{}: {}", config.config_file.empty() ? "" : " in ", config.config_file,
                  valid.message());
    return kExitBadConfig;
  }
  if (config.check_config) {
    std::fputs(config::to_toml(config).c_str(), stdout);
    return kExitOk;
  }

  spdlog::set_level(to_spdlog(config.log_level));
  spdlog::info("{} starting; config: {}", config::version_string(),
               config.config_file.empty() ? "built-in defaults (no config file)" : config.config_file);
  log_access(config.daemon);
  return run_daemon(config);
}

}  // namespace

int main(int argc, char** argv) {
  // Accord code reports errors as Status; this catches what a library may still throw
  // (std::bad_alloc, spdlog::spdlog_ex) so it is logged instead of a bare terminate.
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accordd: fatal: %s\n", e.what());
    return kExitStartFailed;
  }
}
