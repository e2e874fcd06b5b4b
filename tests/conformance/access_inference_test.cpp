// Access-declared operations (ARCHITECTURE.md engine items 1-2): RAW, WAR and WAW order,
// RAR does not, byte ranges matter, repeated writes chain. Checked hand-picked cases
// through ExecutableGraph::dependencies() and through the bytes a run produces;
// frontier_random_test.cpp checks the same rule on thousands of random graphs.
#include <catch2/catch.hpp>

#include <cstring>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;
using Deps = std::vector<std::uint32_t>;

TEST_CASE("a read after a write depends on the write", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer d = make_buffer(rt, 64);
  Graph g = rt.graph();
  const Node w = UNWRAP(g.fill(a.view(), 1));
  const Node r = UNWRAP(g.copy(d.view(), a.view()));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, w) == Deps{});
  CHECK(deps_of(exec, r) == indices({w}));
}

TEST_CASE("a write after a read depends on the read", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer d = make_buffer(rt, 64);
  Graph g = rt.graph();
  const Node r = UNWRAP(g.copy(d.view(), a.view()));
  const Node w = UNWRAP(g.fill(a.view(), 1));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, r) == Deps{});
  CHECK(deps_of(exec, w) == indices({r}));
}

TEST_CASE("a write after a write depends on the earlier write", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  Graph g = rt.graph();
  const Node w1 = UNWRAP(g.fill(a.view(), 1));
  const Node w2 = UNWRAP(g.fill(a.view(), 2));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, w2) == indices({w1}));
  run_once(exec);
  CHECK(read_bytes(a) == repeated(64, 2));
}

TEST_CASE("reads after reads of the same bytes are not ordered", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer d1 = make_buffer(rt, 64);
  const Buffer d2 = make_buffer(rt, 64);
  Graph g = rt.graph();
  UNWRAP(g.copy(d1.view(), a.view()));
  const Node r2 = UNWRAP(g.copy(d2.view(), a.view()));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, r2) == Deps{});
}

TEST_CASE("writes to disjoint or merely adjacent byte ranges are not ordered", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  Graph g = rt.graph();
  UNWRAP(g.fill(slice_of(a, 0, 32), 1));
  const Node adjacent = UNWRAP(g.fill(slice_of(a, 32, 64), 2));
  const Node overlapping = UNWRAP(g.fill(slice_of(a, 31, 33), 3));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, adjacent) == Deps{});
  CHECK(deps_of(exec, overlapping) == Deps{0, adjacent.index});
  run_once(exec);
  std::vector<std::uint8_t> expected = repeated(64, 1);
  std::fill(expected.begin() + 32, expected.end(), 2);
  expected[31] = expected[32] = 3;
  CHECK(read_bytes(a) == expected);
}

TEST_CASE("repeated writes chain instead of fanning in", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  Graph g = rt.graph();
  std::vector<Node> writes;
  for (std::uint8_t v = 1; v <= 5; ++v) writes.push_back(UNWRAP(g.fill(a.view(), v)));
  const ExecutableGraph exec = prepare(std::move(g));
  for (std::size_t i = 1; i < writes.size(); ++i) {
    INFO("write " << i);
    CHECK(deps_of(exec, writes[i]) == indices({writes[i - 1]}));
  }
}

TEST_CASE("a write after several reads depends on every read and on the last writer",
          "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer d1 = make_buffer(rt, 64);
  const Buffer d2 = make_buffer(rt, 64);
  Graph g = rt.graph();
  const Node w0 = UNWRAP(g.fill(a.view(), 9));
  const Node r1 = UNWRAP(g.copy(d1.view(), a.view()));
  const Node r2 = UNWRAP(g.copy(d2.view(), a.view()));
  const Node w3 = UNWRAP(g.fill(a.view(), 4));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, r1) == indices({w0}));
  CHECK(deps_of(exec, r2) == indices({w0}));
  CHECK(deps_of(exec, w3) == indices({w0, r1, r2}));
  run_once(exec);
  CHECK(read_bytes(d1) == repeated(64, 9));
  CHECK(read_bytes(d2) == repeated(64, 9));
  CHECK(read_bytes(a) == repeated(64, 4));
}

TEST_CASE("the seed's frontier example infers exactly the minimal edges", "[conformance][inference]") {
  // Seed section 3.2: W[0,64) -> R[0,32) {0}; R[64,96) {}; W[16,80) {0,1,2};
  // R[24,32) {3}; an operation on another allocation {}. Each read copies into its own
  // destination buffer so that the destinations add no edges.
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 128);
  const Buffer other = make_buffer(rt, 16);
  const Buffer d1 = make_buffer(rt, 32);
  const Buffer d2 = make_buffer(rt, 32);
  const Buffer d4 = make_buffer(rt, 8);
  Graph g = rt.graph();
  const Node n0 = UNWRAP(g.fill(slice_of(a, 0, 64), 1));
  const Node n1 = UNWRAP(g.copy(d1.view(), slice_of(a, 0, 32)));
  const Node n2 = UNWRAP(g.copy(d2.view(), slice_of(a, 64, 96)));
  const Node n3 = UNWRAP(g.fill(slice_of(a, 16, 80), 2));
  const Node n4 = UNWRAP(g.copy(d4.view(), slice_of(a, 24, 32)));
  const Node n5 = UNWRAP(g.fill(other.view(), 3));
  CHECK(g.size() == 6);
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(exec.nodes() == 6);
  CHECK(deps_of(exec, n0) == Deps{});
  CHECK(deps_of(exec, n1) == indices({n0}));
  CHECK(deps_of(exec, n2) == Deps{});
  CHECK(deps_of(exec, n3) == indices({n0, n1, n2}));
  CHECK(deps_of(exec, n4) == indices({n3}));
  CHECK(deps_of(exec, n5) == Deps{});

  SECTION("and the run's bytes follow those edges") {
    run_once(exec);
    CHECK(read_bytes(d1) == repeated(32, 1));  // after n0 (RAW), before n3 (WAR)
    CHECK(read_bytes(d2) == repeated(32, 0));  // before n3 overwrote [64,80) (WAR)
    CHECK(read_bytes(d4) == repeated(8, 2));   // after n3 (RAW)
    std::vector<std::uint8_t> expected(128, 0);
    std::fill(expected.begin(), expected.begin() + 16, 1);
    std::fill(expected.begin() + 16, expected.begin() + 80, 2);
    CHECK(read_bytes(a) == expected);
    CHECK(read_bytes(other) == repeated(16, 3));
  }
}

TEST_CASE("kernel bindings are ordered by their contract's access", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 16;
  const Kernel scale = load_scale(rt, kCount, 2.0f);  // in Read, out Write
  const Buffer in = make_buffer(rt, kCount * 4);
  const Buffer out = make_buffer(rt, kCount * 4);
  const Buffer d = make_buffer(rt, kCount * 4);
  Graph g = rt.graph();
  const Node k = UNWRAP(g.host(scale, {in.view(), out.view()}));
  const Node overwrite_in = UNWRAP(g.fill(in.view(), 0));      // WAR on the Read binding
  const Node read_out = UNWRAP(g.copy(d.view(), out.view()));  // RAW on the Write binding
  const Node rewrite_out = UNWRAP(g.fill(out.view(), 0));      // WAW + WAR
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, overwrite_in) == indices({k}));
  CHECK(deps_of(exec, read_out) == indices({k}));
  CHECK(deps_of(exec, rewrite_out) == indices({k, read_out}));
}

TEST_CASE("a ReadWrite binding both reads and writes", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 8;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 1.0f));  // x Read, y ReadWrite
  const Buffer x = make_buffer(rt, kCount * 4);
  const Buffer y = make_buffer(rt, kCount * 4);
  const Buffer d1 = make_buffer(rt, kCount * 4);
  Graph g = rt.graph();
  const Node init_y = UNWRAP(g.fill(y.view(), 0));
  const Node read_y = UNWRAP(g.copy(d1.view(), y.view()));
  const Node k = UNWRAP(g.host(saxpy, {x.view(), y.view()}));  // reads y (RAW) and writes it (WAR)
  const Node k2 = UNWRAP(g.host(saxpy, {x.view(), y.view()}));  // chains on k only
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, read_y) == indices({init_y}));
  CHECK(deps_of(exec, k) == indices({init_y, read_y}));
  CHECK(deps_of(exec, k2) == indices({k}));
}

TEST_CASE("an operation never depends on itself", "[conformance][inference]") {
  // saxpy with x and y on the same bytes (allowed only through host_aliasing) reads and
  // writes them in one operation: no self-edge, and the next reader follows it alone.
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 4;
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(kCount, 1.0f));
  const Buffer v = make_buffer(rt, kCount * 4);
  const Buffer d = make_buffer(rt, kCount * 4);
  write_floats(v, {1, 2, 3, 4});
  Graph g = rt.graph();
  const std::vector<BufferView> aliased{v.view(), v.view()};
  const Node k = UNWRAP(g.host_aliasing(saxpy, aliased));
  const Node r = UNWRAP(g.copy(d.view(), v.view()));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, k) == Deps{});
  CHECK(deps_of(exec, r) == indices({k}));
  run_once(exec);
  CHECK(read_floats(d) == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("aliases of one buffer and slices of slices share dependency state", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer alias = a;  // a copy of the handle is the same allocation
  const Buffer d = make_buffer(rt, 8);
  CHECK(alias.id() == a.id());
  const BufferView middle = slice_of(alias, 16, 48);
  const BufferView inner = UNWRAP(middle.slice(8, 16));  // bytes [24, 32) of the allocation
  CHECK(inner.offset() == 24);
  CHECK(inner.size() == 8);
  Graph g = rt.graph();
  const Node w = UNWRAP(g.fill(slice_of(a, 20, 28), 5));
  const Node r = UNWRAP(g.copy(d.view(), inner));
  const Node unrelated = UNWRAP(g.fill(slice_of(alias, 40, 64), 6));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, r) == indices({w}));
  CHECK(deps_of(exec, unrelated) == Deps{});
  run_once(exec);
  CHECK(read_bytes(d) == std::vector<std::uint8_t>{5, 5, 5, 5, 0, 0, 0, 0});
}

TEST_CASE("an unknown node has no dependencies", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 16);
  Graph g = rt.graph();
  UNWRAP(g.fill(a.view(), 1));
  UNWRAP(g.fill(a.view(), 2));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(exec.dependencies(Node{1}).size() == 1);
  CHECK(exec.dependencies(Node{2}).empty());
  CHECK(exec.dependencies(Node{1000}).empty());
}

TEST_CASE("fill then copy then kernel produce the bytes their order implies", "[conformance][inference]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 32;
  const Kernel scale = load_scale(rt, kCount, 2.0f);
  const Buffer input = make_buffer(rt, kCount * 4);
  const Buffer staging = make_buffer(rt, kCount * 4);
  const Buffer result = make_buffer(rt, kCount * 4);
  std::vector<float> host(kCount / 2);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) - 4.0f;
  std::vector<float> full(kCount, 0.0f);
  std::copy(host.begin(), host.end(), full.begin());
  write_floats(input, full);

  Graph g = rt.graph();
  UNWRAP(g.fill(staging.view(), 0x40));  // every float 0x40404040
  UNWRAP(g.copy(slice_of(staging, 0, kCount * 2), slice_of(input, 0, kCount * 2)));  // first half
  UNWRAP(g.host(scale, {staging.view(), result.view()}));
  UNWRAP(g.fill(staging.view(), 0xFF));  // must wait for the kernel's read (WAR)
  const ExecutableGraph exec = prepare(std::move(g));
  run_once(exec);

  float pattern = 0;
  const std::uint32_t bits = 0x40404040u;
  std::memcpy(&pattern, &bits, sizeof(pattern));
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i)
    expected[i] = (i < host.size() ? host[i] : pattern) * 2.0f;
  CHECK(read_floats(result) == expected);
  CHECK(read_bytes(staging) == repeated(kCount * 4, 0xFF));
}

TEST_CASE("an empty view touches no bytes", "[conformance][inference]") {
  // Recording an operation on a zero-length view may be refused (Invalid); if it is
  // accepted, it orders nothing and nothing is ordered after it.
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 16);
  const Buffer d = make_buffer(rt, 16);
  const BufferView empty = slice_of(a, 8, 8);
  CHECK(empty.size() == 0);
  Graph g = rt.graph();
  const Node w = UNWRAP(g.fill(a.view(), 1));
  auto on_empty = g.fill(empty, 2);
  if (!on_empty.ok()) {
    CHECK_STATUS(on_empty, FailsWith(ErrorKind::Invalid));
    return;
  }
  const Node r = UNWRAP(g.copy(d.view(), a.view()));
  const ExecutableGraph exec = prepare(std::move(g));
  CHECK(deps_of(exec, *on_empty) == Deps{});
  CHECK(deps_of(exec, r) == indices({w}));
  run_once(exec);
  CHECK(read_bytes(d) == repeated(16, 1));
}
