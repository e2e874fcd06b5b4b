// HostRegion: the host device's native region, a task list lowered once at prepare time
// (ARCHITECTURE.md engine item 3) and run in order on the calling thread at launch.
// Every address, length and kernel argument array is resolved by lower(), so running
// the list allocates nothing and checks nothing it could have checked earlier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "accord/plugin_abi.h"
#include "daemon/devices/device.h"
#include "daemon/devices/host/host_code.h"

namespace accord::devices::host {

class HostRegion final : public NativeRegion {
 public:
  // Lowers `run` into a task list. Validates what the engine's record-time checks do
  // not guarantee for raw pointers: every binding has host-mapped memory and lies
  // within it, Fill has one writable binding, Copy has a writable destination and a
  // readable source of equal length that do not overlap, Kernel has code loaded by the
  // host device and bindings that satisfy its contract (count, extent, offset
  // alignment, access), and every operation is on one lane the host device has.
  // Returns Invalid naming the operation's index in `run` and the binding at fault.
  // Thread-safe.
  static Result<std::unique_ptr<HostRegion>> lower(std::span<const Operation> run);

  // Runs the tasks in order on the calling thread and reports through `sink` exactly
  // once: on_done() after the last task, or on_error(Execution) for the first kernel
  // that fails, skipping the rest. Never allocates on success and never throws.
  // Reads *this only; two runs of one region race on its memory, so the engine
  // orders them like any other work on the same bytes.
  void run(CompletionSink& sink) noexcept;

 private:
  // One step of the list. Pointers borrow from memory and code that the engine keeps
  // alive for as long as the region can run (ARCHITECTURE.md engine item 9).
  struct Task {
    OpKind kind = OpKind::Fill;
    std::uint8_t fill_value = 0;        // Fill
    std::byte* dst = nullptr;           // Fill, Copy
    const std::byte* src = nullptr;     // Copy
    std::size_t bytes = 0;              // Fill, Copy
    const HostCode* code = nullptr;     // Kernel
    std::uint32_t first_buffer = 0;     // Kernel: its buffers in buffers_
    std::uint32_t buffer_count = 0;
  };

  HostRegion() = default;

  std::vector<Task> tasks_;
  std::vector<accord_plugin_buffer_v1_t> buffers_;  // every kernel's buffers, in task order
};

}  // namespace accord::devices::host
