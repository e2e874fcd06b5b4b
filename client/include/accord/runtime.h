// The entry point: one scheduling and allocation domain. A Runtime is a handle; copies
// share it, and every buffer, kernel and graph keeps it alive. It runs over a transport:
// embedded() runs the engine in this process.
//
// Ownership: allocate/load/graph/prepare return owned handles (shared among copies).
// Accessors return borrowed references valid while the owning handle lives. Nothing a
// call returns ever needs an explicit free; the engine keeps memory that in-flight work
// touches until that work completes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/buffer.h"
#include "accord/builtin_kernels.h"
#include "accord/contract.h"
#include "accord/device_id.h"
#include "accord/device_info.h"
#include "accord/graph.h"
#include "accord/kernel.h"
#include "accord/placement.h"
#include "accord/statistics.h"
#include "accord/status.h"
#include "accord/trace.h"

namespace accord {

namespace detail {
class RuntimeImpl;
}

inline constexpr std::size_t kDefaultMaxSubmissions = 64;
inline constexpr std::size_t kDefaultGraphSlots = 2;

// RuntimeOptions::forecast_sleep. Measured with sixteen tenants on an H100
// (tests/bench/RESULTS.md, session 28): through accordd the sleep keeps the graphs per
// second and cuts their p99 by a third; embedded it saves a third of the waiting CPU per
// graph but costs 1-3% of the graphs, since there the sleeping thread is the one that
// would have seen its graph end.
enum class ForecastSleep {
  Never,          // every wait spins from the start
  ThroughDaemon,  // waits on accordd's submission ring (the default)
  Always,         // those, and an embedded runtime's waits for GPU graphs
};

struct RuntimeOptions {
  // Simultaneous accepted-but-unfinished submissions; more is Busy. Must be > 0.
  std::size_t max_submissions = kDefaultMaxSubmissions;
  // Reusable submission slots per prepared graph; more is Busy. Must be > 0.
  std::size_t graph_slots = kDefaultGraphSlots;
  // Ceiling on live allocation bytes; empty means no ceiling. Exceeding it is Busy.
  std::optional<std::uint64_t> memory_budget;
  // Embedded only: engine worker threads. 0 runs all work on threads that wait
  // (deterministic, for tests): work then progresses only inside wait() or a map.
  std::size_t worker_threads = 2;
  // Embedded only: whether host kernels may be loaded from plugin libraries.
  bool allow_plugins = true;
  // Embedded only: the device backends to open by name ("host", "null", "cuda",
  // "level_zero"); empty means every backend built into libaccord that finds hardware.
  // The host device is always opened. A name this build lacks is Invalid (listing the
  // built ones); a named backend that finds no hardware is not an error: its devices are
  // simply absent. accordd's own `devices` setting applies to the daemon transport.
  std::vector<std::string> devices;
  // Embedded only: backend options by "backend.key", the keys accordd's [device_options]
  // takes (e.g. "cuda.streams_per_lane" = "8"). A key the named backend does not know
  // is Invalid when the runtime opens.
  std::map<std::string, std::string> device_options;
  // Embedded only: drive each GPU from an executor process, as accordd does, so that a
  // GPU fault loses only the work in flight there and the GPU comes back (a CUDA fault
  // is otherwise sticky for this process). The path of an accordd binary, which runs
  // as `accordd --gpu-executor N`; empty (the default): the GPU is driven in process.
  // Unsupported in a libaccord built without the daemon.
  std::string gpu_executor;
  // Scheduling priority of this session: 0 default, positive more urgent, negative less
  // urgent, at most 1000 either way. On a GPU it becomes a CUDA stream priority (the
  // device's range is small: every priority above its top shares the top). accordd
  // grants at most what its [priorities] configuration allows this uid or gid (default
  // 0); asking for more refuses the session with Unsupported naming the uid and the
  // maximum. Anyone may ask for less than 0. Embedded: granted as asked.
  int priority = 0;
  // Embedded only: a region still running after this long is failed with Execution and
  // its device marked lost (the engine's watchdog). Must be positive. accordd's own
  // `watchdog_seconds` applies to the daemon transport.
  std::chrono::milliseconds watchdog_timeout{60'000};
  // Embedded only: use the NPU emulator built with Accord (libaccord_npu_emulator.so) as
  // the Level Zero NPU driver. This affects the whole process: it sets the environment
  // variable ZE_ENABLE_ALT_DRIVERS before the Level Zero loader's first zeInit, and the
  // loader reads it only then, so it must be set by the first runtime of the process
  // that opens Level Zero. It also opens the level_zero backend when `devices` names
  // backends without it. Unsupported when this build has no emulator.
  bool npu_emulator = false;
  // Daemon only: submit, wait, cancel, release completions and take host leases
  // (map_read/map_write and their try_ forms) through the session's shared-memory ring
  // (no gRPC call per operation). False uses gRPC for every call, as clients in other
  // languages do.
  bool submission_ring = true;
  // Daemon ring only: how long a waiting thread spins on the ring before it sleeps on its
  // doorbell (a futex). Spinning answers sooner and costs a core meanwhile. It spins
  // this long only while the machine has a core to spare (runnable threads, counted by
  // the kernel, fit on this process's CPUs) or accordd runs at a lower nice value than
  // the waiting thread (as its systemd unit's Nice=-10 sets it: the scheduler then gives
  // accordd the core); otherwise at most a few microseconds, since its spinning would
  // keep accordd's poller off the core it needs to answer.
  std::chrono::microseconds ring_spin{50};
  // Which waits sleep through most of what their graph took before (a low estimate of
  // its recent runs, less a lead of at least 10 us) when 10 us of sleep or more is left,
  // and only then spin as above. With many tenants on one machine, the cores a sleeping
  // waiter gives back are the ones accordd and the GPU driver need; nobody has to wake
  // it. Graphs that took under about 20 us are never slept through.
  ForecastSleep forecast_sleep = ForecastSleep::ThroughDaemon;

  // Invalid ("runtime capacities must be nonzero") for zero capacities, and for a
  // priority outside -1000..1000, and for a watchdog_timeout that is not positive.
  Status validate() const;
};

class Runtime {
 public:
  // Starts the engine in this process with the host device and the backends
  // `options.devices` names. Invalid options (or a backend name this build lacks) ->
  // Invalid.
  static Result<Runtime> embedded(const RuntimeOptions& options = {});
  // Opens a session with accordd: the gRPC control plane at `socket` and the session
  // channel beside it (or at $ACCORD_SESSION_SOCKET). The session asks for the limits in
  // `options` (the daemon grants at most its own); worker_threads, allow_plugins and
  // devices are the daemon's to decide. DeviceLost when accordd cannot be reached,
  // Unsupported when this uid is not allowed.
  static Result<Runtime> connect(const std::string& socket, const RuntimeOptions& options = {});
  // As above, with the socket from $ACCORD_SOCKET, else /run/accord/accord.sock.
  static Result<Runtime> connect(const RuntimeOptions& options = {});

  // Allocates zero-initialised storage. Invalid for 0 bytes; Unsupported for a
  // placement no device here holds; Busy when the memory budget is exhausted.
  Result<Buffer> allocate(std::size_t bytes,
                          MemoryPlacement placement = MemoryPlacement::host_visible()) const;

  // Loads a built-in host kernel by name ("accord.add_f32", ...), checked against
  // `contract`. Invalid on a mismatch; Unsupported for an unknown name.
  Result<Kernel> load_kernel(const std::string& name, const KernelContract& contract) const;
  // Loads built-in kernel `name` onto `device` (DeviceId::gpu(0), ...), checked against
  // `contract`. As above; also Unsupported when no such device is here, and DeviceLost
  // when it is lost. load_kernel(name, contract) is load_kernel(DeviceId::host(), ...).
  Result<Kernel> load_kernel(DeviceId device, const std::string& name, const KernelContract& contract) const;
  Result<Kernel> load_kernel(const builtin::KernelSpec& spec) const {
    return load_kernel(spec.name, spec.contract);
  }
  // Loads kernel `name` from the trusted plugin library at `path` (see plugin_abi.h).
  Result<Kernel> load_plugin_kernel(const std::string& path, const std::string& name,
                                    const KernelContract& contract) const;

  // --- devices ---
  // Every device of this runtime (the host first; present or lost, with memory and
  // state), then one Absent entry per backend that found none, with its reason.
  // DeviceLost when accordd cannot be reached.
  Result<std::vector<DeviceInfo>> devices() const;
  // Device gpu:`ordinal` (or npu:`ordinal`), present or lost. Unsupported naming the id
  // and the devices here when there is none ("no gpu:0 here (devices: host; absent:
  // cuda: libcuda.so.1 not found)").
  Result<DeviceInfo> gpu(int ordinal) const;
  Result<DeviceInfo> npu(int ordinal) const;

  // --- GPU kernels and NPU programs (trusted code: see ARCHITECTURE.md, security) ---
  // Loads `image` onto gpu:`gpu`. The backend checks the image's target against the GPU
  // and the entry's parameters against `contract` (binding pointers in order, then the
  // constant bytes): Invalid naming the targets or the parameter on a mismatch; Invalid
  // for a malformed image; Unsupported when there is no such GPU or when accordd's
  // kernel_policy = catalog refuses client images; DeviceLost when the GPU is lost.
  // Images larger than accordd's max_message_bytes travel as a sealed memfd.
  Result<Kernel> load_gpu_kernel(int gpu, GpuKernelImage image, const KernelContract& contract) const;
  // Loads the compiled NPU program `blob` onto npu:`npu`; `label` names it in messages.
  // The contract's constants must be empty (Invalid otherwise): NPU programs take
  // buffers only. The backend checks the bindings against the program's arguments.
  // Errors as for load_gpu_kernel.
  Result<Kernel> load_npu_program(int npu, std::span<const std::byte> blob, std::string label,
                                  const KernelContract& contract) const;

  Graph graph() const;

  Statistics statistics() const;
  // Starts a bounded trace of at most `event_capacity` region events (oldest dropped).
  // Invalid for 0; Busy if a trace is already running.
  Status start_trace(std::size_t event_capacity) const;
  // Stops the trace now (does not wait for pending work); empty if none was running.
  std::optional<ExecutionTrace> finish_trace() const;

  // The options this runtime runs with. Over accordd: the limits accordd granted the
  // session (max_submissions, graph_slots, memory_budget, priority), which may be less
  // than those asked for; the rest as asked. Embedded: as asked.
  const RuntimeOptions& options() const noexcept;
  // True if `view` belongs to this runtime.
  bool owns(const BufferView& view) const noexcept;

  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl) noexcept : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::RuntimeImpl>& impl() const noexcept { return impl_; }

 private:
  std::shared_ptr<detail::RuntimeImpl> impl_;
};

}  // namespace accord
