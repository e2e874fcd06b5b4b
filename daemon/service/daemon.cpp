// Daemon::Impl wires the pieces in construction order; destruction runs in reverse
// (ARCHITECTURE.md: stop accepting, refuse new sessions, drain, close, stop the engine).
#include "daemon/service/daemon.h"

#include <sys/stat.h>

#include <condition_variable>
#include <mutex>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include "daemon/devices/host/host_registration.h"
#include "daemon/service/accord_service.h"
#include "daemon/service/grpc_listener.h"
#include "daemon/service/session_channel_server.h"

namespace accord::service {

Status DaemonConfig::validate() const {
  if (grpc_socket.empty() || session_socket.empty()) return invalid_error("socket paths must not be empty");
  if (grpc_socket == session_socket) return invalid_error("grpc_socket and session_socket must differ");
  if (socket_mode > 0777) return invalid_error("socket_mode must be an octal permission (at most 0777)");
  if (max_sessions == 0) return invalid_error("max_sessions must be nonzero");
  if (max_objects_per_session == 0) return invalid_error("max_objects must be nonzero");
  if (max_message_bytes < 4096) return invalid_error("max_message_bytes must be at least 4096");
  if (worker_threads == 0 || worker_threads > 64) return invalid_error("workers must be in 1..64");
  return session_limits.validate();
}

class Daemon::Impl {
 public:
  explicit Impl(const DaemonConfig& config)
      : config_(config),
        policy_(config.allowed_uids, config.allowed_gids, config.allow_all_users),
        sessions_(config.max_sessions) {}

  Status start() {
    ACCORD_RETURN_IF_ERROR(config_.validate());
    devices::host::HostDeviceOptions host_options;
    host_options.allow_plugins = true;  // the service applies kernel_policy per call
    auto host = devices::host::make_host_device(host_options);
    if (!host.ok()) return std::move(host).status();
    devices::DeviceRegistry registry;
    registry.add(std::move(host).value());
    engine::EngineOptions engine_options;
    engine_options.worker_threads = config_.worker_threads;
    auto engine = engine::Engine::create(engine_options, std::move(registry));
    if (!engine.ok()) return std::move(engine).status();
    engine_ = std::move(engine).value();

    ServiceOptions service_options;
    service_options.allow_plugins = config_.kernel_policy == KernelPolicy::ClientModules;
    service_options.plugin_paths = config_.plugin_paths;
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
    auto session_server = SessionChannelServer::start(channel, *engine_, sessions_, policy_);
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
    session_server_.reset();
    sessions_.close_all();
    // 3. Stop gRPC: cancels open streams and waits for handlers. The sessions are closed
    //    already, so nothing useful remains; the short deadline only bounds how long
    //    gRPC waits for idle client connections to go away (it waits the whole deadline).
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    server_.reset();
    service_.reset();
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
