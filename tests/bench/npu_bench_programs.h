// The NPU programs the NPU benchmarks run, in the emulator's text format
// (daemon/devices/npu_emulator/README.md): an elementwise add of two n x n inputs, where
// the launch and completion overhead dominates, and an n x n matmul, whose size sets how
// long the NPU works. Inputs hold constants chosen so that every output element is exact
// in f32, so a run can be checked for equality. Plain data and functions: thread-safe.
#pragma once

#include <accord/accord.h>

#include <cstddef>
#include <span>
#include <string>

namespace accord::bench {

struct NpuBenchProgram {
  std::string label;  // "add16x16", "matmul64"
  std::string text;   // the program, three arguments: a, b (inputs), c (output)
  std::size_t elements = 0;  // of each argument (all three are n x n)
  float a_value = 0, b_value = 0;
  float expected = 0;  // every element of c after a run

  std::span<const std::byte> blob() const { return std::as_bytes(std::span<const char>(text.data(), text.size())); }
  std::size_t bytes() const { return elements * sizeof(float); }

  // Inputs Read, the output Write, each n x n f32.
  KernelContract contract() const {
    KernelContract contract;
    for (Access access : {Access::Read, Access::Read, Access::Write})
      contract.bindings.push_back(BindingContract{bytes(), 4, access, "f32"});
    return contract;
  }
};

namespace detail {
inline std::string square_program(std::size_t n, const std::string& operation) {
  const std::string dims = std::to_string(n) + " " + std::to_string(n);
  return "accord-npu-program 1\ninput a f32 " + dims + "\ninput b f32 " + dims + "\noutput c f32 " + dims + "\n" +
         operation + " c a b\n";
}
}  // namespace detail

// c = a + b on n x n: 1.5 + 2.0 = 3.5 everywhere.
inline NpuBenchProgram npu_add_program(std::size_t n) {
  return {"add" + std::to_string(n) + "x" + std::to_string(n), detail::square_program(n, "add"), n * n, 1.5f, 2.0f,
          3.5f};
}

// c = a x b on n x n: with a = 0.5 and b = 2 every element is n (exact for n < 2^24).
inline NpuBenchProgram npu_matmul_program(std::size_t n) {
  return {"matmul" + std::to_string(n), detail::square_program(n, "matmul"), n * n, 0.5f, 2.0f,
          static_cast<float>(n)};
}

}  // namespace accord::bench
