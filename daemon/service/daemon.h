// accordd as an object: the engine, the gRPC control plane on its own Unix socket, and
// the session channel. main.cpp parses flags and the config file into a DaemonConfig,
// starts a Daemon and stops it on SIGTERM; tests start one in process the same way.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/backend_catalog.h"
#include "daemon/engine/session.h"

namespace accord::service {

enum class KernelPolicy : std::uint8_t {
  ClientModules,  // clients may load built-ins and plugin kernels from allowed paths
  Catalog,        // only built-ins and the admin's plugin_paths (mixed-trust boxes)
};

// Who may ask for which scheduling priority ([priorities] in accordd.toml). A session
// asks for one (RuntimeOptions::priority); anyone may ask for 0 or less, and above 0 up
// to the largest of max_priority and the entries for the session's uid and gid.
struct PriorityPolicy {
  int max_priority = 0;                          // everyone's maximum
  std::map<std::uint32_t, int> uid_max;          // per-uid maximums
  std::map<std::uint32_t, int> gid_max;          // per-gid maximums (the peer's primary gid)

  int allowed(std::uint32_t uid, std::uint32_t gid) const {
    int allowed = max_priority;
    if (auto it = uid_max.find(uid); it != uid_max.end() && it->second > allowed) allowed = it->second;
    if (auto it = gid_max.find(gid); it != gid_max.end() && it->second > allowed) allowed = it->second;
    return allowed;
  }
};

struct DaemonConfig {
  std::string grpc_socket = "/run/accord/accord.sock";
  std::string session_socket = "/run/accord/session.sock";
  unsigned socket_mode = 0660;  // both sockets; the directory should be 0750
  // Who may connect (checked on both sockets with SO_PEERCRED). The daemon's own uid
  // and root are always allowed; empty lists allow nobody else.
  std::vector<std::uint32_t> allowed_uids;
  std::vector<std::uint32_t> allowed_gids;
  bool allow_all_users = false;  // any uid may connect (a single-user box)

  std::size_t worker_threads = 2;
  // Threads serving every session's submission ring (ARCHITECTURE.md, "Data plane");
  // 0 is automatic (ring_pollers_for). Never fewer than one per 127 admitted sessions.
  std::size_t ring_poller_threads = 0;
  engine::SessionLimits session_limits;
  std::size_t max_objects_per_session = 4096;  // live handles; more is Busy
  std::size_t max_sessions = 256;
  std::size_t max_message_bytes = 4 << 20;     // largest gRPC request accepted

  KernelPolicy kernel_policy = KernelPolicy::ClientModules;
  std::vector<std::string> plugin_paths;  // allowlist of plugin .so paths; empty: any (ClientModules)
  // Client-supplied GPU images and NPU programs are allowed under ClientModules only;
  // Catalog refuses them (catalog GPU modules are a later addition).

  PriorityPolicy priorities;
  // Who gets GPU executors of their own ([gpu_isolation]): a session whose uid, or else
  // whose primary gid, is listed runs in that group's isolation group ("uid:1001").
  std::vector<std::uint32_t> isolated_uids;
  std::vector<std::uint32_t> isolated_gids;

  // Which device backends to open ("auto" when `backends` is empty) and their options,
  // given to the composition root (daemon/devices/composition). allow_plugins is
  // ignored: the host device always may load plugins, and kernel_policy decides per call.
  devices::DeviceSettings device_settings;
  // A region that has not completed after this long is failed and its device marked
  // lost (ARCHITECTURE.md, devices: the seed's 60 s).
  std::chrono::milliseconds watchdog_timeout{60000};
  // Use the NPU emulator built with Accord as the Level Zero NPU driver: start() sets
  // ZE_ENABLE_ALT_DRIVERS (process-wide) to its path before opening devices, and opens
  // the level_zero backend too when `device_settings.backends` names backends without it.
  bool npu_emulator = false;

  // Invalid with a message naming the bad field: among others, a backend name this
  // build does not have, or a device option whose prefix names none (both listing the
  // built backends).
  Status validate() const;
};

// How many ring poller threads accordd starts. `configured` > 0 is taken as it is;
// 0 (automatic) is half of `cpus`, at least 2 and at most 16: short host graphs run on
// the pollers, so on a machine with cores to spare more of them serve more clients at
// once (on an H200 box with 16 CPUs, 8 pollers served 64 clients 1.9x faster than 3).
// Either way at least one per 127 admitted sessions (a thread serves at most that many;
// a session refused a ring falls back to gRPC at many times the cost), and at most 64.
std::size_t ring_pollers_for(std::size_t configured, std::size_t max_sessions, unsigned cpus) noexcept;

class Daemon {
 public:
  // Opens the devices (the composition root, logging each device and each backend that
  // found none), the engine and both sockets, and starts serving. Unsupported/Invalid
  // with the reason when a socket cannot be created or the config is bad (a backend this
  // build lacks is Invalid naming the built ones). Thread-safe.
  static Result<std::unique_ptr<Daemon>> start(const DaemonConfig& config);
  // Stops in reverse order of construction: stop accepting, refuse new sessions, let
  // in-flight work drain, close sessions, stop the engine. Idempotent.
  ~Daemon();

  // Asks serve-until-stopped to return. Safe to call from any thread (not from a
  // signal handler: main.cpp waits for signals with sigwait on its own thread).
  void request_stop() noexcept;
  // Blocks until request_stop() was called.
  void wait_until_stopped();

  std::size_t session_count() const;

  class Impl;

 private:
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accord::service
