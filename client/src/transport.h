// The transport interfaces behind the public handles. A transport (embedded: the
// engine in process; daemon: gRPC + the session channel) implements these, and the
// public classes in client/include/accord forward to them. Private to client/src.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/completion.h"
#include "accord/contract.h"
#include "accord/device_id.h"
#include "accord/device_info.h"
#include "accord/executable_graph.h"
#include "accord/graph.h"
#include "accord/lane.h"
#include "accord/placement.h"
#include "accord/runtime.h"
#include "accord/statistics.h"
#include "accord/status.h"
#include "accord/trace.h"

namespace accord::detail {

class RuntimeImpl;

enum class LeaseMode : std::uint8_t { Read, Write };

class BufferImpl {
 public:
  virtual ~BufferImpl() = default;
  virtual std::size_t size() const noexcept = 0;
  virtual MemoryPlacement placement() const noexcept = 0;
  virtual std::uint64_t id() const noexcept = 0;
  virtual const RuntimeImpl* runtime() const noexcept = 0;
  // Address of byte 0 mapped in this process, or nullptr when not host mapped.
  virtual std::byte* host_address() const noexcept = 0;
  // Host leases; see Buffer::map_read. Blocking when `block`.
  virtual Status acquire(LeaseMode mode, bool block) = 0;
  virtual void release(LeaseMode mode) noexcept = 0;
};

class KernelImpl {
 public:
  virtual ~KernelImpl() = default;
  virtual const std::string& name() const noexcept = 0;
  virtual const KernelContract& contract() const noexcept = 0;
  virtual const RuntimeImpl* runtime() const noexcept = 0;
  // The device it was loaded onto.
  virtual DeviceId device() const noexcept = 0;
};

enum class NodeKind : std::uint8_t { Fill, Copy, Kernel };

struct BindingRecord {
  std::shared_ptr<BufferImpl> buffer;
  std::size_t offset = 0;
  std::size_t length = 0;
};

// One recorded node, already checked at record time.
struct NodeRecord {
  NodeKind kind = NodeKind::Fill;
  std::optional<LaneKind> lane;  // copies: explicit lane (copy_on), else by direction
  std::uint8_t fill_value = 0;
  std::shared_ptr<KernelImpl> kernel;
  std::vector<BindingRecord> bindings;
  bool allow_aliasing = false;
};

struct GraphRecord {
  std::vector<NodeRecord> nodes;
};

// A prepared graph. The transport fills in the inspection data; submit is virtual.
class ExecutableGraphImpl {
 public:
  virtual ~ExecutableGraphImpl() = default;
  virtual Result<Completion> submit_after(std::span<const Completion> after) = 0;

  std::size_t nodes() const noexcept { return dep_offsets.empty() ? 0 : dep_offsets.size() - 1; }
  std::span<const Node> dependencies(Node node) const noexcept {
    if (node.index >= nodes()) return {};
    return {deps.data() + dep_offsets[node.index], deps.data() + dep_offsets[node.index + 1]};
  }

  std::vector<RegionInfo> regions;
  std::vector<std::uint32_t> dep_offsets;  // nodes + 1 entries
  std::vector<Node> deps;
};

// Client-supplied device code as a transport carries it: a GPU image (with its entry in
// `name` and its launch shape) or an NPU program blob (labelled by `name`).
struct CodeLoad {
  DeviceId device;
  std::string name;
  std::span<const std::byte> image;  // borrowed for the call
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
};

class RuntimeImpl : public std::enable_shared_from_this<RuntimeImpl> {
 public:
  virtual ~RuntimeImpl() = default;

  virtual Result<std::shared_ptr<BufferImpl>> allocate(std::size_t bytes, MemoryPlacement placement) = 0;
  // Loads onto `device`. `plugin_path` empty: a built-in kernel.
  virtual Result<std::shared_ptr<KernelImpl>> load_kernel(DeviceId device, const std::string& plugin_path,
                                                          const std::string& name,
                                                          const KernelContract& contract) = 0;
  // Loads a GPU image or an NPU program (`code.image` non-empty) onto `code.device`.
  // The caller checked the structure (GpuKernelImage::validate, empty NPU constants).
  virtual Result<std::shared_ptr<KernelImpl>> load_code(const CodeLoad& code, const KernelContract& contract) = 0;
  // Runtime::devices(): present and lost devices, then absent backends.
  virtual Result<std::vector<DeviceInfo>> devices() = 0;
  virtual Result<std::shared_ptr<ExecutableGraphImpl>> prepare(GraphRecord record) = 0;
  virtual Statistics statistics() = 0;
  virtual Status start_trace(std::size_t capacity) = 0;
  virtual std::optional<ExecutionTrace> finish_trace() = 0;

  const RuntimeOptions& options() const noexcept { return options_; }

 protected:
  explicit RuntimeImpl(RuntimeOptions options) : options_(std::move(options)) {}

 private:
  RuntimeOptions options_;
};

}  // namespace accord::detail
