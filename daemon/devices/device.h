// A Device is one accelerator (or the host CPU) as the engine sees it. The engine talks
// to backends only through this interface and DeviceRegistry; it never includes a
// backend header. Inference happens in the engine at prepare; a device only lowers a
// run of same-lane operations it is given (with the edges between them), and launches
// what it lowered. A new backend starts as a copy of daemon/devices/null/.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/access.h"
#include "accord/contract.h"
#include "accord/device_id.h"
#include "accord/lane.h"
#include "accord/placement.h"
#include "accord/status.h"

namespace accord::devices {

using accord::DeviceKind;
// Position of a device in its registry. Not capped by a small constant: a box may have
// eight GPUs and an NPU beside the host.
using DeviceIndex = std::uint16_t;

struct DeviceInfo {
  DeviceKind kind = DeviceKind::Host;
  int ordinal = 0;       // 0 for the host; the GPU or NPU index otherwise
  std::string backend;   // the backend that built it: "host", "null", "cuda", ...
  std::string name;      // "host", "cuda:0 (NVIDIA H200)"
  std::string target;    // architecture the device executes ("x86_64", "sm_90")
  std::uint64_t memory_bytes = 0;  // device memory, 0 when it has none of its own
  // A stable identity across restarts where the hardware has one ("GPU-xxxxxxxx-..." as
  // NVIDIA tools print it); empty otherwise.
  std::string uuid;

  DeviceId id() const noexcept { return {kind, ordinal}; }
};

// Storage owned by its home device. Destroying it returns the memory to the device, so
// the engine destroys it only when no queued or running work can touch it, and only
// after every admission of it to another device was destroyed.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // Bytes the device granted: at least what was asked for (GPU memory comes in 2 MiB
  // units). Budgets are charged this.
  virtual std::size_t bytes() const noexcept = 0;
  // Host address of the first byte, or nullptr when the memory is not host mapped.
  virtual std::byte* host_address() const noexcept = 0;
  // The address the home device uses for the first byte (a CUdeviceptr for GPU memory).
  // Defaults to the host address.
  virtual std::uint64_t device_address() const noexcept {
    return reinterpret_cast<std::uint64_t>(host_address());
  }
  // A file descriptor that another process can map (a sealed memfd for host pages),
  // or -1 when the memory cannot be exported. Borrowed: valid while *this lives.
  virtual int export_fd() const noexcept = 0;
};

// One device's view of memory whose home is another device: HostVisible pages
// registered with a GPU, or imported by an NPU. Owned by the allocation; destroyed
// before the home memory (a GPU must unregister pages before they are unmapped).
class AdmittedMemory {
 public:
  virtual ~AdmittedMemory() = default;
  // The address the admitting device uses for the first byte.
  virtual std::uint64_t device_address() const noexcept = 0;
};

struct AllocationRequest {
  std::size_t bytes = 0;
  MemoryPlacement placement = MemoryPlacement::host_visible();
};

// What code to load: a kernel built into the backend, or one from a plugin library,
// on the device `device` names.
struct CodeImage {
  enum class Kind : std::uint8_t { Builtin, Plugin };
  Kind kind = Kind::Builtin;
  std::string name;         // kernel name ("accord.add_f32", or the plugin's kernel)
  std::string plugin_path;  // Kind::Plugin only: path of the shared object
  DeviceId device = DeviceId::host();  // the device that loads and runs it

  // GPU code (the cuda backend): PTX text, a cubin or a fatbin, in which `name` is the
  // kernel's entry point. Non-empty bytes make this a GPU image whatever `kind` says
  // (no new Kind: a new enumerator would break every exhaustive switch over Kind).
  // Backends without GPU code ignore these fields.
  // NPU programs (the level_zero backend) travel in the same field: on an NPU device
  // (`device` of kind Npu) `image` is the compiled model blob handed to the graph
  // extension, and `name` labels it in messages; grid, block and shared_bytes are unused.
  std::vector<std::byte> image{};
  // The fixed launch shape of a GPU kernel: grid and block dimensions (x, y, z), and
  // dynamic shared memory per block in bytes.
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;

  bool is_gpu_image() const noexcept { return !image.empty(); }
};

// Code checked against its contract at load. Owned by whoever loaded it; prepared
// regions keep a pointer, so the engine retains the LoadedCode in the prepared graph.
class LoadedCode {
 public:
  virtual ~LoadedCode() = default;
  virtual const std::string& name() const noexcept = 0;
  virtual const KernelContract& contract() const noexcept = 0;
};

enum class OpKind : std::uint8_t { Fill, Copy, Kernel };

// One view bound to an operation, resolved for the device that runs the operation.
struct OperationBinding {
  const DeviceMemory* memory = nullptr;      // the home memory
  const AdmittedMemory* admission = nullptr; // this device's view, when not the home
  std::uint64_t address = 0;  // byte 0 of the allocation as this device addresses it
  std::size_t offset = 0;
  std::size_t length = 0;
  Access access = Access::Read;
};

// One recorded operation as the device sees it at lowering. Copy: bindings[0] is the
// destination, bindings[1] the source. Fill: bindings[0] with `fill_value`. Kernel:
// bindings in contract order, constants from the contract.
struct Operation {
  OpKind kind = OpKind::Fill;
  LaneKind lane = LaneKind::Compute;
  std::uint8_t fill_value = 0;
  const LoadedCode* code = nullptr;
  std::span<const OperationBinding> bindings;
  std::uint32_t node = 0;  // the graph node it came from, for error messages
};

// `before` must complete before `after` starts; indices into the run being lowered.
// Only the inferred (RAW, WAR, WAW) edges: a backend that builds a native graph gets
// the real parallelism, not a chain.
struct OperationEdge {
  std::uint32_t before = 0;
  std::uint32_t after = 0;
};

struct RegionRequest {
  std::span<const Operation> operations;  // in recording order
  std::span<const OperationEdge> edges;   // sorted by `after`, then `before`
  // Submission slots of the graph: every launch names one slot in [0, slots), and a
  // slot has at most one launch in flight. A backend may instantiate per slot.
  std::uint32_t slots = 1;
  // The session's scheduling priority (0 default, positive more urgent, negative less).
  // The backend maps it to its native priority, e.g. CUDA stream priorities; 0 is the
  // device default. Backends without priorities ignore it.
  int priority = 0;
  // Who the region's launches are for: the session's number in the order sessions were
  // opened (Session::tenant: 1, 2, 3, ...; 0 for none). A backend may
  // keep tenants apart by it (CUDA: cuda.tenant_contexts); regions of one session always
  // name the same tenant, so their native waits stay within what it chose.
  std::uint64_t tenant = 0;

  // A request for `operations` with no edges and one slot (tests, benchmarks).
  static RegionRequest of(std::span<const Operation> operations) noexcept {
    RegionRequest request;
    request.operations = operations;
    return request;
  }
};

// A lowered run of operations (a host task list, a CUDA graph, a command list).
class NativeRegion {
 public:
  virtual ~NativeRegion() = default;

  // Where another process may see a launch in `slot` succeed without asking the device:
  // the byte offset, in the device's completion_word_fd(), of a 32-bit word that is 0
  // from launch() until the launch has completed successfully with its results visible,
  // then kCompletionWordDone. A failed launch leaves any other value (0, or a value a
  // backend writes to release its own waiters); only its sink says how it ended.
  // std::nullopt when the slot has no such word (the default). Lets accordd see a GPU executor's completions
  // with a load instead of a message (daemon/executor/README.md, "Completion words").
  virtual std::optional<std::uint64_t> completion_word(std::uint32_t slot) const noexcept {
    static_cast<void>(slot);
    return std::nullopt;
  }
};

// The value of a completion word (NativeRegion::completion_word) once its launch succeeded.
inline constexpr std::uint32_t kCompletionWordDone = 1;

// A same-device predecessor that may still be running, in the slot it runs in.
struct RegionWait {
  const NativeRegion* region = nullptr;
  std::uint32_t slot = 0;
};

// What a launch is told: the slot it runs in and, for a device that waits natively,
// the same-device predecessors (of the same submission) that were not yet done when
// the scheduler launched it. Empty for devices that do not wait natively: their
// predecessors have all completed.
struct RegionWaits {
  std::uint32_t slot = 0;
  std::span<const RegionWait> predecessors;
};

// Exactly one of these is called, exactly once, possibly on a device thread. The sink
// may be reused for a later launch as soon as the call returns.
class CompletionSink {
 public:
  virtual void on_done() noexcept = 0;
  virtual void on_error(Status status) noexcept = 0;  // Execution or DeviceLost
  virtual void on_cancelled() noexcept = 0;           // cancellation is not an error

 protected:
  ~CompletionSink() = default;
};

// How a device tells its owner that it is lost (a sticky native error, a driver reset).
// Implemented by the registry. Thread-safe; may be called from a device thread.
class DeviceListener {
 public:
  virtual void on_device_lost(Status cause) noexcept = 0;
  // The device is usable again after a loss (a GPU executor was restarted): new
  // allocations, code and regions work; everything made before the loss stays lost.
  // `how` says what was done ("executor restarted (pid 1234) after: <cause>").
  virtual void on_device_recovered(std::string how) noexcept { static_cast<void>(how); }

 protected:
  ~DeviceListener() = default;
};

// What Device::wait_for_completion() saw.
enum class CompletionWait { Reported, TimedOut, Idle };

class Device {
 public:
  virtual ~Device() = default;

  // --- identity and query (cheap, thread-safe) ---
  virtual const DeviceInfo& info() const noexcept = 0;
  virtual std::span<const LaneKind> lanes() const noexcept = 0;
  // Whether this device is the home of `placement` (HostVisible for the host device).
  virtual bool supports(MemoryPlacement placement) const noexcept = 0;
  // True when launch() honours RegionWaits natively (events), so the scheduler may
  // launch a region before its same-device predecessors finished.
  virtual bool waits_natively() const noexcept { return false; }
  // True when launch() runs the region to completion on the calling thread.
  virtual bool launches_synchronously() const noexcept = 0;
  // Device memory free now, in bytes; 0 when unknown or when the device has none of its
  // own (the default). May ask the driver: cheap, but not for the submit path.
  virtual std::uint64_t free_memory() const noexcept { return 0; }

  // --- memory (may allocate; not on the submit path). Thread-safe. ---
  // Returns zero-initialised storage of at least `request.bytes`. Invalid for 0 bytes,
  // Unsupported placements, Busy when the device is out of memory.
  virtual Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) = 0;
  // This device's view of `memory`, whose home is `home` (another device). Unsupported
  // when this device cannot reach that memory. The result is destroyed before `memory`.
  virtual Result<std::unique_ptr<AdmittedMemory>> admit(const DeviceMemory& memory,
                                                        const DeviceInfo& home) = 0;

  // --- code (checked against the contract at load). Thread-safe. ---
  // Invalid when the code's metadata does not match `contract` (binding count, access,
  // alignment, constant bytes); Unsupported when the image kind or kernel is unknown.
  virtual Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image,
                                                   const KernelContract& contract) = 0;

  // --- prepare time: lower a run of same-lane operations into one native region ---
  // The operations' bindings may be discarded after the call; the memory they point
  // to outlives the region (the engine retains it). Thread-safe.
  virtual Result<std::unique_ptr<NativeRegion>> lower(const RegionRequest& request) = 0;

  // --- submit time: never blocks on other work, never allocates, reports through
  // `sink` exactly once. A device that executes on the calling thread (the host
  // device) calls `sink` before returning; others call it from their own thread.
  // The engine takes none of its locks around this call.
  virtual void launch(NativeRegion& region, const RegionWaits& waits,
                      CompletionSink& sink) noexcept = 0;

  // --- helping: a thread that waits for this device's work may look for completions ---
  // True when poll_completions() can see completions (cheaply: it is called in a loop).
  virtual bool completes_by_polling() const noexcept { return false; }
  // Looks once for launches that completed and reports them through their sinks on the
  // calling thread, which spares that thread a wake-up by the device's own. Thread-safe;
  // the engine holds none of its locks around it. Default: nothing to look at.
  virtual void poll_completions() noexcept {}
  // True when wait_for_completion() blocks on the device's own signal (an NPU's fence),
  // so that a waiting thread is woken by the device itself rather than by the device's
  // completion thread: one wake-up where a hand-off costs two in a row.
  virtual bool completes_by_waiting() const noexcept { return false; }
  // Blocks up to `limit` for the device's oldest launch in flight to end, and reports it
  // on the calling thread (Reported also when another thread reported it meanwhile).
  // Idle at once when nothing is in flight. Thread-safe; the engine holds none of its
  // locks around it. Default: Idle.
  virtual CompletionWait wait_for_completion(std::chrono::nanoseconds limit) noexcept {
    static_cast<void>(limit);
    return CompletionWait::Idle;
  }

  // A memfd holding the completion words of this device's regions
  // (NativeRegion::completion_word), shareable read-write with another process; -1 when
  // its regions have none (the default). Borrowed: valid while the device lives.
  virtual int completion_word_fd() const noexcept { return -1; }

  // --- teardown ---
  // Stops the device's threads. After it returns no sink is called again; regions
  // still in flight (a hung one the watchdog already failed) are abandoned. Called
  // once, by the engine, after the scheduler drained and before native regions and
  // memory are released. Default: nothing to stop.
  virtual void shut_down() noexcept {}

  // Set once by the registry, before any other call. A backend reports loss through
  // report_lost(); the registry turns it into DeviceLost for everything on the device.
  void attach(DeviceListener& listener) noexcept { listener_ = &listener; }

 protected:
  // Thread-safe. The first report wins; later ones are ignored by the registry.
  void report_lost(Status cause) noexcept {
    if (listener_ != nullptr) listener_->on_device_lost(std::move(cause));
  }
  // Thread-safe. After report_lost(), once the device serves new work again. Memory,
  // code and regions created before the loss must keep failing (DeviceLost) if used.
  void report_recovered(std::string how) noexcept {
    if (listener_ != nullptr) listener_->on_device_recovered(std::move(how));
  }

 private:
  DeviceListener* listener_ = nullptr;
};

}  // namespace accord::devices
