// NpuProgram: the emulator's "compiled model" format, parsed and validated once when a
// graph is created (README.md, "Program format"). After parse_program() accepts a blob,
// every shape, index and size in the program is known to be consistent and bounded, so
// run_program() reads and writes only the argument buffers (of the sizes the argument
// properties report) and its own scratch. Immutable after parsing: thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace accord::npu_emulator {

// Bounds a blob can never exceed; checked before anything is allocated.
inline constexpr std::size_t kMaxBlobBytes = 1u << 20;
inline constexpr std::size_t kMaxRank = 4;
inline constexpr std::uint64_t kMaxDim = 1u << 24;
inline constexpr std::uint64_t kMaxTensorElements = 1u << 26;        // 256 MiB of f32
inline constexpr std::uint64_t kMaxScratchElements = 1u << 27;       // intermediates, all together
inline constexpr std::size_t kMaxTensors = 256;
inline constexpr std::size_t kMaxArguments = 64;
inline constexpr std::size_t kMaxOperations = 1024;
inline constexpr std::size_t kMaxNameLength = 64;

enum class TensorRole : std::uint8_t { Input, Output, Intermediate };
enum class OpCode : std::uint8_t { MatMul, Add, Relu, Softmax, Copy, Stall };

struct Tensor {
  std::string name;
  TensorRole role = TensorRole::Intermediate;
  std::vector<std::uint32_t> dims;  // 1..kMaxRank entries, each 1..kMaxDim
  std::uint64_t elements = 0;       // product of dims, <= kMaxTensorElements
  std::uint32_t argument = 0;       // Input/Output: index among the arguments
  std::uint64_t scratch_offset = 0; // Intermediate: first element in the scratch block
  std::uint64_t bytes() const noexcept { return elements * sizeof(float); }
};

struct Operation {
  OpCode code = OpCode::Copy;
  std::uint32_t out = 0;  // tensor indices; unused ones are 0
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t line = 0;  // for messages
};

struct Program {
  std::vector<Tensor> tensors;
  std::vector<std::uint32_t> arguments;  // tensor index of argument i (declaration order)
  std::vector<Operation> operations;
  std::uint64_t scratch_elements = 0;
  bool stalls = false;  // contains the test hook `stall`
};

// Parses and validates `blob`. Returns the program, or nullopt with `error` set to a
// message naming the line and what is wrong. Never reads outside `blob`.
std::optional<Program> parse_program(std::span<const std::uint8_t> blob, std::string& error);

// Runs `program` with `arguments[i]` the buffer bound to argument i, holding at least
// tensors[arguments[i]].bytes() bytes. `stall` is called for the test hook `stall`
// and returns when the program should go on (the queue is being destroyed). Returns
// false when stopped by `stall` returning false (the rest of the program is skipped).
bool run_program(const Program& program, std::span<void* const> arguments, const std::function<bool()>& stall);

}  // namespace accord::npu_emulator
