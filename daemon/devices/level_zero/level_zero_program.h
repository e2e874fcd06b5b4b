// NpuProgram: an NPU program (a compiled model blob) created through the graph
// extension on one NPU, with its argument properties, checked against the contract it
// was loaded with. Owned by the engine's prepared graphs; keeps the runtime alive.
// Thread-safety: const members are thread-safe; binding arguments and recording an
// execute must happen under binding_mutex() (lowering does), since the driver captures
// the bound buffers when the execute is appended.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "daemon/devices/device.h"
#include "daemon/devices/level_zero/level_zero_runtime.h"

namespace accord::devices::level_zero {

struct NpuArgument {
  std::string name;
  bool output = false;     // ZE_GRAPH_ARGUMENT_TYPE_OUTPUT: the program writes it
  std::size_t bytes = 0;   // product of dims x 4 (f32)
  std::string layout;      // "f32[2,4]", for messages
};

class NpuProgram final : public LoadedCode {
 public:
  // Creates the graph from `image.image` on `npu` and checks `contract` against the
  // program's arguments: count, direction (input = Read, output = Write), byte size;
  // no constants. Invalid naming the argument on a mismatch, or with the driver's build
  // log when the blob is refused; Unsupported for a precision other than f32.
  static Result<std::unique_ptr<NpuProgram>> create(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                    const NpuHandle& npu, const CodeImage& image,
                                                    const KernelContract& contract);

  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }

  ze_graph_handle_t graph() const noexcept { return graph_.get(); }
  const ze_graph_dditable_ext_t& table() const noexcept { return *table_; }
  const NpuHandle& npu() const noexcept { return *npu_; }
  std::span<const NpuArgument> arguments() const noexcept { return arguments_; }
  std::mutex& binding_mutex() const noexcept { return binding_mutex_; }

 private:
  NpuProgram() = default;

  std::shared_ptr<const LevelZeroRuntime> runtime_;
  const NpuHandle* npu_ = nullptr;
  const ze_graph_dditable_ext_t* table_ = nullptr;
  std::string name_;
  KernelContract contract_;
  std::vector<NpuArgument> arguments_;
  UniqueZeGraph graph_;
  mutable std::mutex binding_mutex_;
};

// Checks `contract` against `arguments` (what NpuProgram::create does after creating
// the graph). Exposed for tests. Invalid naming the program and the argument.
Status check_program_contract(const std::string& program, std::span<const NpuArgument> arguments,
                              const KernelContract& contract);

}  // namespace accord::devices::level_zero
