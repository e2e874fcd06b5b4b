// The one-region graphs the latency benchmarks submit, built the same way for every
// transport: a 64-byte fill, or accord.add_f32 over 16 floats. verify() checks the bytes,
// so a benchmark that measured nothing cannot pass.
#pragma once

#include <accord/accord.h>

#include <cstddef>
#include <utility>

#include "tests/bench/bench_util.h"

namespace accord::bench {

enum class GraphKind { Fill64, AddF32x16 };

struct ProbeGraph {
  GraphKind kind = GraphKind::Fill64;
  ExecutableGraph exe;
  Buffer out;
  float expected = 0;

  bool verify() const {
    ReadGuard guard = unwrap(out.map_read(), "map_read");
    return kind == GraphKind::Fill64 ? guard.bytes()[63] == std::byte{0x5A} : guard.as<float>()[15] == expected;
  }
};

inline ProbeGraph make_probe_graph(const Runtime& runtime, GraphKind kind) {
  ProbeGraph p;
  p.kind = kind;
  Graph graph = runtime.graph();
  if (kind == GraphKind::Fill64) {
    p.out = unwrap(runtime.allocate(64), "allocate");
    check(graph.fill(p.out.view(), 0x5A).status(), "fill");
  } else {
    constexpr std::uint32_t kCount = 16;
    Buffer a = unwrap(runtime.allocate(kCount * sizeof(float)), "allocate a");
    Buffer b = unwrap(runtime.allocate(kCount * sizeof(float)), "allocate b");
    p.out = unwrap(runtime.allocate(kCount * sizeof(float)), "allocate out");
    for (auto [buffer, value] : {std::pair{a, 1.5f}, std::pair{b, 2.0f}}) {
      WriteGuard guard = unwrap(buffer.map_write(), "map_write");
      for (float& x : guard.as<float>()) x = value;
    }
    p.expected = 3.5f;
    Kernel add = unwrap(runtime.load_kernel(builtin::add_f32(kCount)), "load accord.add_f32");
    check(graph.host(add, {a.view(), b.view(), p.out.view()}).status(), "host");
  }
  p.exe = unwrap(std::move(graph).prepare(), "prepare");
  return p;
}

}  // namespace accord::bench
