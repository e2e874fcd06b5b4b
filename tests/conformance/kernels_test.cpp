// Host kernels compute what they promise when run through a prepared graph: the
// built-ins (accord.add_f32, saxpy_f32, matmul_f32, relu_f32, loaded from their
// builtin:: specs) and the test plugin's test.scale_f32. Inputs are small integers and
// halves, so every expected value is exact in f32.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

namespace {
std::vector<float> iota_floats(std::size_t n, float start, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}
}  // namespace

TEST_CASE("accord.add_f32 adds two vectors", "[conformance][kernels]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 37;
  const Kernel add = load_builtin(rt, builtin::add_f32(kCount));
  CHECK(add.name() == "accord.add_f32");
  const Buffer a = make_buffer(rt, kCount * 4);
  const Buffer b = make_buffer(rt, kCount * 4);
  const Buffer out = make_buffer(rt, kCount * 4);
  const auto av = iota_floats(kCount, -10.0f, 1.0f);
  const auto bv = iota_floats(kCount, 0.5f, 2.0f);
  write_floats(a, av);
  write_floats(b, bv);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(add, {a.view(), b.view(), out.view()}));
  run_once(prepare(std::move(g)));
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = av[i] + bv[i];
  CHECK(read_floats(out) == expected);
  CHECK(read_floats(a) == av);  // inputs untouched
}

TEST_CASE("accord.saxpy_f32 computes a*x + y in place", "[conformance][kernels]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 20;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 2.5f));
  const Buffer x = make_buffer(rt, kCount * 4);
  const Buffer y = make_buffer(rt, kCount * 4);
  const auto xv = iota_floats(kCount, -4.0f, 1.0f);
  const auto yv = iota_floats(kCount, 100.0f, -3.0f);
  write_floats(x, xv);
  write_floats(y, yv);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(saxpy, {x.view(), y.view()}));
  const ExecutableGraph exec = prepare(std::move(g));
  run_once(exec);
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = 2.5f * xv[i] + yv[i];
  CHECK(read_floats(y) == expected);
  run_once(exec);  // y accumulates: run twice, add a*x twice
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = 2.5f * xv[i] + expected[i];
  CHECK(read_floats(y) == expected);
}

TEST_CASE("accord.matmul_f32 multiplies row-major matrices", "[conformance][kernels]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t M = 3, K = 4, N = 5;
  const Kernel matmul = load_builtin(rt, builtin::matmul_f32(M, K, N));
  const Buffer a = make_buffer(rt, M * K * 4);
  const Buffer b = make_buffer(rt, K * N * 4);
  const Buffer c = make_buffer(rt, M * N * 4);
  const auto av = iota_floats(M * K, -5.0f, 1.0f);
  const auto bv = iota_floats(K * N, 3.0f, -0.5f);
  write_floats(a, av);
  write_floats(b, bv);
  fill_on_host(c, 0x41);  // C is overwritten, not accumulated into
  Graph g = rt.graph();
  REQUIRE_OK(g.host(matmul, {a.view(), b.view(), c.view()}));
  run_once(prepare(std::move(g)));
  std::vector<float> expected(M * N, 0.0f);
  for (std::uint32_t i = 0; i < M; ++i)
    for (std::uint32_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (std::uint32_t k = 0; k < K; ++k) sum += av[i * K + k] * bv[k * N + j];
      expected[i * N + j] = sum;
    }
  CHECK(read_floats(c) == expected);
}

TEST_CASE("accord.relu_f32 clamps negatives and NaN to zero", "[conformance][kernels]") {
  CONFORMANCE_RUNTIME(rt);
  const std::vector<float> in = {-3.0f, -0.5f, 0.0f, 0.25f, 7.0f,
                                 std::numeric_limits<float>::quiet_NaN(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::infinity()};
  const auto count = static_cast<std::uint32_t>(in.size());
  const Kernel relu = load_builtin(rt, builtin::relu_f32(count));
  const Buffer x = make_buffer(rt, count * 4);
  const Buffer y = make_buffer(rt, count * 4);
  write_floats(x, in);
  fill_on_host(y, 0x7F);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(relu, {x.view(), y.view()}));
  run_once(prepare(std::move(g)));
  const auto out = read_floats(y);
  REQUIRE(out.size() == in.size());
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 0.0f);
  CHECK(out[3] == 0.25f);
  CHECK(out[4] == 7.0f);
  CHECK(out[5] == 0.0f);  // NaN becomes 0
  CHECK(out[6] == 0.0f);
  CHECK(out[7] == std::numeric_limits<float>::infinity());
}

TEST_CASE("built-in kernels chain through one graph: relu(A x B) + bias", "[conformance][kernels]") {
  const std::size_t workers = GENERATE(as<std::size_t>{}, 0, 2);
  CAPTURE(workers);
  CONFORMANCE_RUNTIME(rt, with_workers(workers));
  constexpr std::uint32_t M = 4, K = 3, N = 2;
  const Kernel matmul = load_builtin(rt, builtin::matmul_f32(M, K, N));
  const Kernel relu = load_builtin(rt, builtin::relu_f32(M * N));
  const Kernel add = load_builtin(rt, builtin::add_f32(M * N));
  const Buffer a = make_buffer(rt, M * K * 4);
  const Buffer b = make_buffer(rt, K * N * 4);
  const Buffer bias = make_buffer(rt, M * N * 4);
  const Buffer product = make_buffer(rt, M * N * 4);
  const Buffer activated = make_buffer(rt, M * N * 4);
  const Buffer result = make_buffer(rt, M * N * 4);
  const auto av = iota_floats(M * K, -6.0f, 1.0f);
  const auto bv = iota_floats(K * N, 1.0f, -0.5f);
  const auto biasv = iota_floats(M * N, 0.5f, 0.5f);
  write_floats(a, av);
  write_floats(b, bv);
  write_floats(bias, biasv);

  Graph g = rt.graph();
  const Node mm = UNWRAP(g.host(matmul, {a.view(), b.view(), product.view()}));
  const Node act = UNWRAP(g.host(relu, {product.view(), activated.view()}));
  const Node sum = UNWRAP(g.host(add, {activated.view(), bias.view(), result.view()}));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, act) == indices({mm}));
  CHECK(deps_of(exec, sum) == indices({act}));
  CHECK(exec.regions() == 1);  // three Host-lane operations in a row
  run_once(exec);

  std::vector<float> expected(M * N);
  for (std::uint32_t i = 0; i < M; ++i)
    for (std::uint32_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (std::uint32_t k = 0; k < K; ++k) s += av[i * K + k] * bv[k * N + j];
      expected[i * N + j] = std::max(s, 0.0f) + biasv[i * N + j];
    }
  CHECK(read_floats(result) == expected);
}

TEST_CASE("a kernel bound to slices touches only its slices", "[conformance][kernels]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 4;
  const Kernel add = load_builtin(rt, builtin::add_f32(kCount));
  const Buffer big = make_buffer(rt, 64);  // 16 floats
  write_floats(big, iota_floats(16, 0.0f, 1.0f));
  Graph g = rt.graph();
  // out = floats [8, 12) = floats [0, 4) + floats [4, 8)
  REQUIRE_OK(g.host(add, {slice_of(big, 0, 16), slice_of(big, 16, 32), slice_of(big, 32, 48)}));
  run_once(prepare(std::move(g)));
  std::vector<float> expected = iota_floats(16, 0.0f, 1.0f);
  for (std::size_t i = 0; i < kCount; ++i) expected[8 + i] = expected[i] + expected[4 + i];
  CHECK(read_floats(big) == expected);
}

TEST_CASE("a plugin kernel runs: test.scale_f32 scales a vector", "[conformance][kernels][plugin]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 10;
  const Kernel scale = load_scale(rt, kCount, -0.5f);
  CHECK(scale.name() == "test.scale_f32");
  const Buffer in = make_buffer(rt, kCount * 4);
  const Buffer out = make_buffer(rt, kCount * 4);
  const auto v = iota_floats(kCount, -8.0f, 2.0f);
  write_floats(in, v);
  Graph g = rt.graph();
  REQUIRE_OK(g.host(scale, {in.view(), out.view()}));
  run_once(prepare(std::move(g)));
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = v[i] * -0.5f;
  CHECK(read_floats(out) == expected);
}
