// NPU test programs in the emulator's format and their CPU reference results, shared by
// the emulator's tests (through the loader) and the level_zero backend's tests (through
// the Device interface). Header-only; include from test code only.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace accord::npu_testing {

// A program with its arguments in declaration order and a reference implementation.
struct ProgramCase {
  const char* name;
  std::string text;
  std::vector<std::size_t> elements;  // per argument
  std::vector<bool> output;           // per argument
  // Computes the outputs from the inputs; `args[i]` holds argument i.
  void (*reference)(std::vector<std::vector<float>>& args);
};

inline void matmul(const float* a, const float* b, float* out, std::size_t m, std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float sum = 0;
      for (std::size_t x = 0; x < k; ++x) sum += a[i * k + x] * b[x * n + j];
      out[i * n + j] = sum;
    }
}

inline void softmax(const float* in, float* out, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float max = in[r * cols];
    for (std::size_t c = 0; c < cols; ++c) max = std::max(max, in[r * cols + c]);
    float sum = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c] - max);
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(in[r * cols + c] - max) / sum;
  }
}

inline std::vector<ProgramCase> program_cases() {
  return {
      {"matmul",
       "accord-npu-program 1\ninput a f32 5 7\ninput b f32 7 3\noutput c f32 5 3\nmatmul c a b\n",
       {35, 21, 15},
       {false, false, true},
       [](std::vector<std::vector<float>>& v) { matmul(v[0].data(), v[1].data(), v[2].data(), 5, 7, 3); }},
      {"add",
       "accord-npu-program 1\ninput a f32 4 16\ninput b f32 4 16\noutput c f32 4 16\nadd c a b\n",
       {64, 64, 64},
       {false, false, true},
       [](std::vector<std::vector<float>>& v) {
         for (std::size_t i = 0; i < 64; ++i) v[2][i] = v[0][i] + v[1][i];
       }},
      {"relu",
       "accord-npu-program 1\ninput x f32 100\noutput y f32 100\nrelu y x\n",
       {100, 100},
       {false, true},
       [](std::vector<std::vector<float>>& v) {
         for (std::size_t i = 0; i < 100; ++i) v[1][i] = v[0][i] > 0 ? v[0][i] : 0.0f;
       }},
      {"softmax",
       "accord-npu-program 1\ninput x f32 3 10\noutput y f32 3 10\nsoftmax y x\n",
       {30, 30},
       {false, true},
       [](std::vector<std::vector<float>>& v) { softmax(v[0].data(), v[1].data(), 3, 10); }},
      {"copy",
       "accord-npu-program 1\ninput x f32 2 8\noutput y f32 16\ncopy y x\n",
       {16, 16},
       {false, true},
       [](std::vector<std::vector<float>>& v) { v[1] = v[0]; }},
      {"mlp (matmul, add, relu, softmax through intermediates)",
       "# a two-layer perceptron\naccord-npu-program 1\ninput x f32 2 4\ninput w f32 4 3\ninput bias f32 2 3\n"
       "output probs f32 2 3\ntensor h f32 2 3\ntensor s f32 2 3\ntensor r f32 2 3\n"
       "matmul h x w\nadd s h bias\nrelu r s\nsoftmax probs r\n",
       {8, 12, 6, 6},
       {false, false, false, true},
       [](std::vector<std::vector<float>>& v) {
         float h[6];
         matmul(v[0].data(), v[1].data(), h, 2, 4, 3);
         for (int i = 0; i < 6; ++i) h[i] = std::max(0.0f, h[i] + v[2][i]);
         softmax(h, v[3].data(), 2, 3);
       }},
  };
}

// Random inputs in [-2, 2) for every input argument; outputs zeroed.
inline std::vector<std::vector<float>> random_arguments(const ProgramCase& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<std::vector<float>> args;
  for (std::size_t i = 0; i < c.elements.size(); ++i) {
    args.emplace_back(c.elements[i], 0.0f);
    if (!c.output[i])
      for (float& x : args.back()) x = dist(rng);
  }
  return args;
}

// A program that stalls (the test hook) after copying its input.
inline const char* stall_program() {
  return "accord-npu-program 1\ninput x f32 4\noutput y f32 4\ncopy y x\nstall\n";
}

}  // namespace accord::npu_testing
