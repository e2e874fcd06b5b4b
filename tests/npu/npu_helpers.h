// Shared helpers of the [npu] suite: a runtime whose npu:0 (the NPU emulator) is
// present, or a failure with the reason (CI installs the Level Zero loader, and the
// emulator is built whenever its headers exist, so a missing NPU is a failure, not a
// skip), NPU programs in the emulator's text format, and f32 helpers. Public API only,
// so the suite runs over both transports like the conformance suite.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "tests/conformance/conformance_helpers.h"

namespace accord::npu_test {

// Options for this transport's runtime with the NPU emulator: the embedded transport
// sets ZE_ENABLE_ALT_DRIVERS itself (RuntimeOptions::npu_emulator); the daemon under
// test was started with --npu-emulator (backends_daemon_npu.cpp).
inline RuntimeOptions npu_options() {
  RuntimeOptions options;
  options.npu_emulator = true;
  return options;
}

// A runtime of this executable's transport whose npu:0 is present; REQUIREs it,
// saying why there is none.
inline Runtime npu_runtime(RuntimeOptions options = npu_options()) {
  auto rt = make_conformance_runtime(options);
  INFO("transport " << conformance_transport_name());
  REQUIRE_OK(rt);
  auto npu = rt->npu(0);
  INFO("npu:0 is required (the NPU emulator through the Level Zero loader: is libze1 installed?): "
       << (npu.ok() ? std::string() : npu.status().to_string()));
  REQUIRE_OK(npu);
  INFO("npu:0 is " << (npu->state == DeviceState::Present ? "present" : "lost") << ": " << npu->reason);
  REQUIRE(npu->state == DeviceState::Present);
  return std::move(rt).value();
}

inline std::span<const std::byte> blob_of(const std::string& text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

// Bindings in argument order: inputs Read, outputs Write, f32 elements each.
struct Arg {
  std::size_t elements;
  bool output;
};
inline KernelContract npu_contract(std::initializer_list<Arg> args) {
  KernelContract contract;
  for (const Arg& a : args)
    contract.bindings.push_back(
        BindingContract{a.elements * sizeof(float), 4, a.output ? Access::Write : Access::Read, "f32"});
  return contract;
}

inline Kernel load_program(const Runtime& rt, const std::string& text, const std::string& label,
                           std::initializer_list<Arg> args) {
  auto program = rt.load_npu_program(0, blob_of(text), label, npu_contract(args));
  INFO("loading NPU program " << label << ":\n" << text);
  REQUIRE_OK(program);
  return std::move(program).value();
}

inline Buffer shared_buffer(const Runtime& rt, std::size_t floats) {
  auto buffer = rt.allocate(floats * sizeof(float), MemoryPlacement::shared(0));
  INFO("allocating " << floats << " f32 as Shared(0)");
  REQUIRE_OK(buffer);
  return std::move(buffer).value();
}

inline std::vector<float> random_floats(std::size_t count, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(count);
  for (float& f : out) f = dist(gen);
  return out;
}

inline void check_close(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-4f) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float scale = std::max(1.0f, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tolerance * scale)) {
      if (bad++ < 5) UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    }
  }
  CHECK(bad == 0);
}

inline std::vector<float> cpu_matmul(const std::vector<float>& a, const std::vector<float>& b, std::size_t m,
                                     std::size_t k, std::size_t n) {
  std::vector<float> out(m * n, 0.0f);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float sum = 0;
      for (std::size_t x = 0; x < k; ++x) sum += a[i * k + x] * b[x * n + j];
      out[i * n + j] = sum;
    }
  return out;
}

inline std::vector<float> cpu_softmax(const std::vector<float>& in, std::size_t rows, std::size_t cols) {
  std::vector<float> out(in.size());
  for (std::size_t r = 0; r < rows; ++r) {
    float max = in[r * cols];
    for (std::size_t c = 0; c < cols; ++c) max = std::max(max, in[r * cols + c]);
    float sum = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c] - max);
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(in[r * cols + c] - max) / sum;
  }
  return out;
}

// "input a f32 M K" etc.
inline std::string dims(std::size_t a) { return std::to_string(a); }
inline std::string dims(std::size_t a, std::size_t b) { return std::to_string(a) + " " + std::to_string(b); }

}  // namespace accord::npu_test
