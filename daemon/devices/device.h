// A Device is one accelerator (or the host CPU) as the engine sees it. The engine talks
// to backends only through this interface and DeviceRegistry; it never includes a
// backend header. Inference happens in the engine at prepare; a device only lowers a
// run of same-lane operations it is given, and launches what it lowered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "accord/access.h"
#include "accord/contract.h"
#include "accord/lane.h"
#include "accord/placement.h"
#include "accord/status.h"

namespace accord::devices {

enum class DeviceKind : std::uint8_t { Host, Gpu, Npu };

struct DeviceInfo {
  DeviceKind kind = DeviceKind::Host;
  int ordinal = 0;       // 0 for the host; the GPU or NPU index otherwise
  std::string name;      // "host", "cuda:0 (NVIDIA H200)"
  std::string target;    // architecture the device executes ("x86_64", "sm_90")
};

// Storage owned by a device. Destroying it returns the memory to the device, so the
// engine destroys it only when no queued or running work can touch it.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::size_t bytes() const noexcept = 0;
  // Host address of the first byte, or nullptr when the memory is not host mapped.
  virtual std::byte* host_address() const noexcept = 0;
  // A file descriptor that another process can map (a sealed memfd for host pages),
  // or -1 when the memory cannot be exported. Borrowed: valid while *this lives.
  virtual int export_fd() const noexcept = 0;
};

struct AllocationRequest {
  std::size_t bytes = 0;
  MemoryPlacement placement = MemoryPlacement::host_visible();
};

// What code to load: a kernel built into the backend, or one from a plugin library.
struct CodeImage {
  enum class Kind : std::uint8_t { Builtin, Plugin };
  Kind kind = Kind::Builtin;
  std::string name;         // kernel name ("accord.add_f32", or the plugin's kernel)
  std::string plugin_path;  // Kind::Plugin only: path of the shared object
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

// One view bound to an operation, resolved to device memory.
struct OperationBinding {
  const DeviceMemory* memory = nullptr;
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
};

// A lowered run of operations (a host task list, a CUDA graph, a command list).
class NativeRegion {
 public:
  virtual ~NativeRegion() = default;
};

// Native waits on same-device predecessors. The engine resolves every dependency on the
// host today, so this is empty; a backend with events can start a region earlier.
struct RegionWaits {
  std::span<NativeRegion* const> predecessors;
};

// Exactly one of these is called, exactly once, possibly on a device thread.
class CompletionSink {
 public:
  virtual void on_done() noexcept = 0;
  virtual void on_error(Status status) noexcept = 0;  // Execution or DeviceLost
  virtual void on_cancelled() noexcept = 0;           // cancellation is not an error

 protected:
  ~CompletionSink() = default;
};

class Device {
 public:
  virtual ~Device() = default;

  // --- identity and query (cheap, thread-safe) ---
  virtual const DeviceInfo& info() const noexcept = 0;
  virtual std::span<const LaneKind> lanes() const noexcept = 0;
  // Whether this device can hold `placement` (HostVisible for the host device).
  virtual bool supports(MemoryPlacement placement) const noexcept = 0;

  // --- memory (may allocate; not on the submit path). Thread-safe. ---
  // Returns zero-initialised storage. Invalid for 0 bytes, Unsupported placements,
  // Busy when the device is out of memory.
  virtual Result<std::unique_ptr<DeviceMemory>> allocate(const AllocationRequest& request) = 0;

  // --- code (checked against the contract at load). Thread-safe. ---
  // Invalid when the code's metadata does not match `contract` (binding count, access,
  // alignment, constant bytes); Unsupported when the image kind or kernel is unknown.
  virtual Result<std::unique_ptr<LoadedCode>> load(const CodeImage& image,
                                                   const KernelContract& contract) = 0;

  // --- prepare time: lower a run of same-lane operations into one native region ---
  // The operations' bindings may be discarded after the call; the memory they point
  // to outlives the region (the engine retains it). Thread-safe.
  virtual Result<std::unique_ptr<NativeRegion>> lower(std::span<const Operation> run) = 0;

  // --- submit time: never blocks on other work, never allocates, reports through
  // `sink` exactly once. A device that executes on the calling thread (the host
  // device) calls `sink` before returning; others call it from their own thread.
  virtual void launch(NativeRegion& region, const RegionWaits& waits,
                      CompletionSink& sink) noexcept = 0;
  // True when launch() runs the region to completion on the calling thread.
  virtual bool launches_synchronously() const noexcept = 0;
};

}  // namespace accord::devices
