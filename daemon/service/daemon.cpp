// Daemon::Impl wires the pieces in construction order; destruction runs in reverse
// (ARCHITECTURE.md: stop accepting, refuse new sessions, drain, close, stop the engine).
#include "daemon/service/daemon.h"

#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include "daemon/devices/composition/open_devices.h"
#include "daemon/emulation/npu_emulator_env.h"
#include "daemon/service/accord_service.h"
#include "daemon/service/grpc_listener.h"
#include "daemon/service/session_channel_server.h"
#include "proto/wire/ring_poller.h"

namespace accord::service {

Status DaemonConfig::validate() const {
  if (grpc_socket.empty() || session_socket.empty()) return invalid_error("socket paths must not be empty");
  if (grpc_socket == session_socket) return invalid_error("grpc_socket and session_socket must differ");
  if (socket_mode > 0777) return invalid_error("socket_mode must be an octal permission (at most 0777)");
  if (max_sessions == 0) return invalid_error("max_sessions must be nonzero");
  if (max_objects_per_session == 0) return invalid_error("max_objects must be nonzero");
  if (max_message_bytes < 4096) return invalid_error("max_message_bytes must be at least 4096");
  if (worker_threads == 0 || worker_threads > 64) return invalid_error("workers must be in 1..64");
  if (ring_poller_threads > 64) return invalid_error("ring_pollers must be in 1..64, or 0 for automatic");
  if (watchdog_timeout <= std::chrono::milliseconds::zero()) return invalid_error("watchdog_seconds must be positive");
  // Checked here as well as by open_devices, so that --check-config reports it.
  const std::vector<std::string> built = devices::built_backends();
  std::string built_list;
  for (const std::string& name : built) built_list += (built_list.empty() ? "" : ", ") + name;
  const auto is_built = [&](std::string_view name) { return std::find(built.begin(), built.end(), name) != built.end(); };
  for (const std::string& name : device_settings.backends)
    if (!is_built(name))
      return invalid_error("devices: no backend named '" + name + "' in this build (built: " + built_list + ")");
  for (const auto& [key, value] : device_settings.options) {
    const std::string_view backend = std::string_view(key).substr(0, key.find('.'));
    if (!is_built(backend))
      return invalid_error("device_options: '" + key + "' names no backend of this build (built: " + built_list + ")");
  }
  const auto priority_ok = [](int p) { return p >= -engine::kMaxPriority && p <= engine::kMaxPriority; };
  bool priorities_ok = priority_ok(priorities.max_priority);
  for (const auto& [id, p] : priorities.uid_max) priorities_ok &= priority_ok(p);
  for (const auto& [id, p] : priorities.gid_max) priorities_ok &= priority_ok(p);
  if (!priorities_ok) return invalid_error("priorities: every maximum must be in -1000..1000");
  return session_limits.validate();
}

std::size_t ring_pollers_for(std::size_t configured, std::size_t max_sessions, unsigned cpus) noexcept {
  const std::size_t wanted = configured > 0 ? configured : std::clamp<std::size_t>(cpus / 2, 2, 16);
  const std::size_t needed = (max_sessions + wire::RingPoller::kRingsPerThread - 1) / wire::RingPoller::kRingsPerThread;
  return std::min<std::size_t>(std::max(wanted, needed), 64);
}

namespace {

// The CPUs this process may run on (its affinity mask), as the poller count's base.
unsigned usable_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The devices accordd starts with, in the log: operators read why a GPU is missing here.
void log_devices(const devices::DeviceRegistry& registry) {
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const devices::DeviceInfo& info = registry.at(i).info();
    spdlog::info("device {}: {} '{}' ({} backend), target {}", i, info.id().to_string(), info.name, info.backend,
                 info.target.empty() ? "-" : info.target);
  }
  for (const devices::AbsentBackend& absent : registry.absent())
    spdlog::warn("device backend '{}' opened no device: {}", absent.backend, absent.reason);
}

}  // namespace

class Daemon::Impl {
 public:
  explicit Impl(const DaemonConfig& config)
      : config_(config),
        policy_(config.allowed_uids, config.allowed_gids, config.allow_all_users),
        sessions_(config.max_sessions) {}

  Status start() {
    ACCORD_RETURN_IF_ERROR(config_.validate());
    devices::DeviceSettings settings = config_.device_settings;
    for (std::uint32_t uid : config_.isolated_uids) settings.isolation_groups.push_back("uid:" + std::to_string(uid));
    for (std::uint32_t gid : config_.isolated_gids) settings.isolation_groups.push_back("gid:" + std::to_string(gid));
    if (config_.npu_emulator) {
      ACCORD_RETURN_IF_ERROR(emulation::enable_npu_emulator());
      if (!settings.backends.empty() &&
          std::find(settings.backends.begin(), settings.backends.end(), "level_zero") == settings.backends.end())
        settings.backends.push_back("level_zero");
      spdlog::info("npu_emulator: ZE_ENABLE_ALT_DRIVERS={}", std::getenv("ZE_ENABLE_ALT_DRIVERS"));
    }
    settings.allow_plugins = true;  // the service applies kernel_policy per call
    auto registry = devices::open_devices(settings);
    if (!registry.ok()) return std::move(registry).status();
    log_devices(registry.value());

    engine::EngineOptions engine_options;
    engine_options.worker_threads = config_.worker_threads;
    engine_options.watchdog_timeout = config_.watchdog_timeout;
    // Identities are copied now: the callback may run on a device thread while the
    // engine is being torn down, so it must not reach into the engine for them.
    std::vector<std::string> names;
    for (std::size_t i = 0; i < registry.value().size(); ++i) {
      const devices::DeviceInfo& info = registry.value().at(i).info();
      names.push_back(info.id().to_string() + " '" + info.name + "'");
    }
    engine_options.on_device_lost = [names](devices::DeviceIndex index, const Status& cause) {
      spdlog::error("device {}: {} is lost: {}", index, index < names.size() ? names[index] : std::string("?"),
                    cause.message());
    };
    engine_options.on_device_recovered = [names = std::move(names)](devices::DeviceIndex index,
                                                                    const std::string& how) {
      spdlog::warn("device {}: {} is back in service: {}", index,
                   index < names.size() ? names[index] : std::string("?"), how);
    };
    auto engine = engine::Engine::create(engine_options, std::move(registry).value());
    if (!engine.ok()) return std::move(engine).status();
    engine_ = std::move(engine).value();

    // The ring service before the gRPC service, which reports its pollers (GetStatistics).
    wire::RingPollerOptions poller;
    poller.threads = ring_pollers_for(config_.ring_poller_threads, config_.max_sessions, usable_cpus());
    auto rings = RingService::start(engine_->scheduler(), poller);
    if (!rings.ok()) return std::move(rings).status();
    rings_ = std::move(rings).value();

    ServiceOptions service_options;
    service_options.allow_plugins = config_.kernel_policy == KernelPolicy::ClientModules;
    service_options.plugin_paths = config_.plugin_paths;
    service_options.rings = rings_.get();
    service_ = std::make_unique<AccordService>(*engine_, sessions_, peers_, policy_, service_options);

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
    // No listening port: connections arrive through GrpcListener (AddInsecureChannelFromFd).
    server_ = builder.BuildAndStart();
    if (!server_) return internal_error("the gRPC server did not start");

    SessionChannelOptions channel;
    channel.path = config_.session_socket;
    channel.mode = config_.socket_mode;
    channel.limits = config_.session_limits;
    channel.max_objects = config_.max_objects_per_session;
    channel.priorities = config_.priorities;
    channel.isolated_uids = config_.isolated_uids;
    channel.isolated_gids = config_.isolated_gids;
    channel.max_message_bytes = config_.max_message_bytes;
    auto session_server = SessionChannelServer::start(channel, *engine_, sessions_, policy_, *rings_);
    if (!session_server.ok()) return std::move(session_server).status();
    session_server_ = std::move(session_server).value();
    auto listener = GrpcListener::start(config_.grpc_socket, config_.socket_mode, *server_, peers_);
    if (!listener.ok()) return std::move(listener).status();
    listener_ = std::move(listener).value();
    spdlog::info("accordd serving: gRPC on {}, sessions on {}", config_.grpc_socket, config_.session_socket);
    return Status();
  }

  ~Impl() {
    // 1. Stop accepting connections of either kind.
    if (listener_) listener_->stop();
    // 2. Refuse new sessions and close every open one: their handles go, while the
    //    engine keeps what in-flight work touches until it finishes.
    if (session_server_) session_server_->stop();
    listener_.reset();
    session_server_.reset();  // closes every session's ring with its connection
    sessions_.close_all();
    // 3. Stop gRPC: cancels open streams and waits for handlers. The sessions are closed
    //    already, so nothing useful remains; the short deadline only bounds how long
    //    gRPC waits for idle client connections to go away (it waits the whole deadline).
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    server_.reset();
    service_.reset();
    rings_.reset();  // after the service, which reports its pollers; every ring is closed already
    // 4. Drain remaining work and stop the workers; the devices close with the engine.
    engine_.reset();
    std::remove(config_.grpc_socket.c_str());
    std::remove(config_.session_socket.c_str());
  }

  void request_stop() noexcept {
    {
      std::lock_guard lock(mu_);
      stop_requested_ = true;
    }
    cv_.notify_all();
  }
  void wait_until_stopped() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stop_requested_; });
  }
  std::size_t session_count() const { return sessions_.size(); }

 private:
  DaemonConfig config_;
  AccessPolicy policy_;
  SessionRegistry sessions_;
  PeerRegistry peers_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<AccordService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<RingService> rings_;  // reset after the session server (its connections close rings) and the service
  std::unique_ptr<SessionChannelServer> session_server_;
  std::unique_ptr<GrpcListener> listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
};

Result<std::unique_ptr<Daemon>> Daemon::start(const DaemonConfig& config) {
  auto impl = std::make_unique<Impl>(config);
  ACCORD_RETURN_IF_ERROR(impl->start());
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;
void Daemon::request_stop() noexcept { impl_->request_stop(); }
void Daemon::wait_until_stopped() { impl_->wait_until_stopped(); }
std::size_t Daemon::session_count() const { return impl_->session_count(); }

}  // namespace accord::service
