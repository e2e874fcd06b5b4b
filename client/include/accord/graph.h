// A pipeline builder. Every recorded operation states where it runs and exactly which
// buffer ranges it touches; there are no explicit edges. prepare() infers ordering
// from the declared access (RAW, WAR, WAW) and lowers the graph to lane regions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "accord/buffer.h"
#include "accord/device_id.h"
#include "accord/kernel.h"
#include "accord/lane.h"
#include "accord/status.h"

namespace accord {

namespace detail {
class RuntimeImpl;
struct GraphRecord;
}
class ExecutableGraph;

// An operation's index in its graph, for diagnostics; ordering never comes from nodes.
struct Node {
  std::uint32_t index = 0;
  friend constexpr bool operator==(Node, Node) = default;
  friend constexpr auto operator<=>(Node, Node) = default;
};

class Graph {
 public:
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // Every method checks at record time and returns Invalid naming the binding at fault;
  // a failed call records nothing. Views must belong to this graph's runtime.

  // Writes `value` to every byte of `destination` (Compute lane).
  Result<Node> fill(const BufferView& destination, std::uint8_t value);
  // Copies `source` to `destination` (equal lengths, no overlap). The lane follows the
  // direction: host-mapped -> device-local is Upload, device-local -> host-mapped is
  // Download, anything else Compute.
  Result<Node> copy(const BufferView& destination, const BufferView& source);
  // The same copy on an explicit lane.
  Result<Node> copy_on(const BufferView& destination, const BufferView& source, GpuLane lane);
  // Runs a host kernel (built-in or plugin) on the Host lane with `bindings` in contract
  // order. Checks count, minimum extent, offset alignment and writable aliasing.
  Result<Node> host(const Kernel& kernel, std::span<const BufferView> bindings);
  Result<Node> host(const Kernel& kernel, std::initializer_list<BufferView> bindings) {
    return host(kernel, std::span<const BufferView>(bindings.begin(), bindings.size()));
  }
  // As host(), but overlapping writable bindings are allowed: the caller asserts the
  // kernel tolerates them.
  Result<Node> host_aliasing(const Kernel& kernel, std::span<const BufferView> bindings);
  // Launches a GPU kernel (Runtime::load_gpu_kernel) on its GPU's Compute lane, with its
  // fixed launch shape and `bindings` in contract order. Checks as host() does, and that
  // the kernel was loaded onto a GPU (Invalid naming its device otherwise). Views must
  // be visible to that GPU (GpuLocal of it, or HostVisible); prepare() says otherwise.
  Result<Node> gpu(const Kernel& kernel, std::span<const BufferView> bindings);
  Result<Node> gpu(const Kernel& kernel, std::initializer_list<BufferView> bindings) {
    return gpu(kernel, std::span<const BufferView>(bindings.begin(), bindings.size()));
  }
  // Runs an NPU program (Runtime::load_npu_program) on its NPU's lane; checks as gpu().
  Result<Node> npu(const Kernel& program, std::span<const BufferView> bindings);
  Result<Node> npu(const Kernel& program, std::initializer_list<BufferView> bindings) {
    return npu(program, std::span<const BufferView>(bindings.begin(), bindings.size()));
  }

  std::size_t size() const noexcept;

  // Infers dependencies, lowers consecutive same-lane operations into regions and
  // reserves the runtime's graph_slots. Consumes the builder. Invalid for an empty graph.
  Result<ExecutableGraph> prepare() &&;

  explicit Graph(std::shared_ptr<detail::RuntimeImpl> runtime);

 private:
  Result<Node> record_kernel(const Kernel& kernel, std::span<const BufferView> bindings,
                             bool allow_aliasing);
  Result<Node> record_device_kernel(const Kernel& kernel, std::span<const BufferView> bindings, DeviceKind kind);
  Result<Node> record_copy(const BufferView& destination, const BufferView& source, LaneKind lane);
  std::shared_ptr<detail::RuntimeImpl> runtime_;
  std::unique_ptr<detail::GraphRecord> record_;
};

}  // namespace accord
