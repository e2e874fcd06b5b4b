// Dependency inference on thousands of random graphs, through the public API: fills,
// copies and saxpy kernels on random slices of a few small buffers, compared with the
// per-byte brute-force oracle (tests/support/brute_force_oracle.h). A sample of the
// graphs is also run and its bytes compared with a sequential simulation.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <random>
#include <sstream>

#include "tests/conformance/conformance_helpers.h"
#include "tests/support/brute_force_oracle.h"

using namespace accord;
using namespace accord::conformance;

namespace {

constexpr std::uint64_t kBaseSeed = 0xACC0'4D00'0000'0000ull;
constexpr int kGraphs = 2500;
constexpr int kRunEvery = 10;  // run every tenth graph and compare its bytes
constexpr std::size_t kMaxOps = 16;

// Buffers 0-2 take bytes from anywhere. Buffer 3 holds f32 values and only receives
// 4-aligned whole floats (fills of small byte values, copies from itself, saxpy), so
// it never holds a NaN or an infinity and saxpy results compare bit for bit.
constexpr std::array<std::size_t, 4> kSizes = {24, 40, 64, 64};
constexpr std::size_t kFloatBuffer = 3;

enum class OpKind { Fill, Copy, Saxpy };

struct Range {
  std::size_t buffer = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct Op {
  OpKind kind = OpKind::Fill;
  Range dst;          // fill/copy destination, saxpy y
  Range src;          // copy source, saxpy x
  std::uint8_t value = 0;
};

std::size_t draw(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  return lo + static_cast<std::size_t>(rng() % (hi - lo + 1));
}

bool overlap(const Range& a, const Range& b) {
  return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

Range random_range(std::mt19937_64& rng, std::size_t buffer, std::size_t length) {
  const std::size_t begin = draw(rng, 0, kSizes[buffer] - length);
  return {buffer, begin, begin + length};
}

Range random_float_range(std::mt19937_64& rng, std::size_t floats) {
  const std::size_t total = kSizes[kFloatBuffer] / 4;
  const std::size_t first = draw(rng, 0, total - floats);
  return {kFloatBuffer, first * 4, (first + floats) * 4};
}

Op random_op(std::mt19937_64& rng) {
  Op op;
  const std::size_t roll = draw(rng, 0, 99);
  if (roll < 35) {
    op.kind = OpKind::Fill;
    const std::size_t b = draw(rng, 0, kSizes.size() - 1);
    if (b == kFloatBuffer) {
      op.dst = random_float_range(rng, draw(rng, 1, kSizes[b] / 4));
      op.value = static_cast<std::uint8_t>(draw(rng, 0, 0x3F));
    } else {
      op.dst = random_range(rng, b, draw(rng, 1, kSizes[b]));
      op.value = static_cast<std::uint8_t>(draw(rng, 0, 255));
    }
    return op;
  }
  if (roll < 80) {
    op.kind = OpKind::Copy;
    for (;;) {
      const std::size_t d = draw(rng, 0, kSizes.size() - 1);
      if (d == kFloatBuffer) {
        // Whole floats from the float buffer itself, never overlapping.
        const std::size_t floats = draw(rng, 1, kSizes[d] / 8);
        op.dst = random_float_range(rng, floats);
        op.src = random_float_range(rng, floats);
      } else {
        const std::size_t s = draw(rng, 0, kSizes.size() - 1);
        const std::size_t length = draw(rng, 1, std::min(kSizes[d], kSizes[s]) / (d == s ? 2 : 1));
        op.dst = random_range(rng, d, length);
        op.src = random_range(rng, s, length);
      }
      if (!overlap(op.dst, op.src)) return op;
    }
  }
  op.kind = OpKind::Saxpy;  // y[0] = 2 * x[0] + y[0]; the views declare more than that
  for (;;) {
    op.src = random_float_range(rng, draw(rng, 1, 4));
    op.dst = random_float_range(rng, draw(rng, 1, 4));
    if (!overlap(op.dst, op.src)) return op;
  }
}

std::string describe(const std::vector<Op>& ops) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    auto range = [&](const Range& r) {
      out << "b" << r.buffer << "[" << r.begin << "," << r.end << ")";
    };
    out << "  node " << i << ": ";
    switch (op.kind) {
      case OpKind::Fill: out << "fill "; range(op.dst); out << " = " << int(op.value); break;
      case OpKind::Copy: out << "copy "; range(op.dst); out << " <- "; range(op.src); break;
      case OpKind::Saxpy: out << "saxpy y="; range(op.dst); out << " x="; range(op.src); break;
    }
    out << "\n";
  }
  return out.str();
}

using Memory = std::array<std::vector<std::uint8_t>, kSizes.size()>;

void simulate(const std::vector<Op>& ops, Memory& memory) {
  for (const Op& op : ops) {
    switch (op.kind) {
      case OpKind::Fill:
        std::fill(memory[op.dst.buffer].begin() + static_cast<std::ptrdiff_t>(op.dst.begin),
                  memory[op.dst.buffer].begin() + static_cast<std::ptrdiff_t>(op.dst.end), op.value);
        break;
      case OpKind::Copy:
        std::memmove(memory[op.dst.buffer].data() + op.dst.begin,
                     memory[op.src.buffer].data() + op.src.begin, op.dst.end - op.dst.begin);
        break;
      case OpKind::Saxpy: {
        float x = 0, y = 0;
        std::memcpy(&x, memory[kFloatBuffer].data() + op.src.begin, 4);
        std::memcpy(&y, memory[kFloatBuffer].data() + op.dst.begin, 4);
        y = 2.0f * x + y;  // 2x is exact, so a fused multiply-add gives the same bits
        std::memcpy(memory[kFloatBuffer].data() + op.dst.begin, &y, 4);
        break;
      }
    }
  }
}

}  // namespace

TEST_CASE("inferred dependencies match the brute-force oracle on thousands of random graphs",
          "[conformance][inference][random]") {
  CONFORMANCE_RUNTIME(rt);
  std::vector<Buffer> buffers;
  for (std::size_t size : kSizes) buffers.push_back(make_buffer(rt, size));
  const Kernel saxpy = load_builtin(rt, builtin::saxpy_f32(1, 2.0f));

  int mismatches = 0;
  int runs = 0;
  for (int graph_index = 0; graph_index < kGraphs && mismatches < 5; ++graph_index) {
    const std::uint64_t seed = kBaseSeed + static_cast<std::uint64_t>(graph_index);
    std::mt19937_64 rng(seed);
    std::vector<Op> ops(draw(rng, 1, kMaxOps));
    for (Op& op : ops) op = random_op(rng);
    INFO("seed " << seed << " (graph " << graph_index << "), transport "
                 << conformance_transport_name() << ":\n" << describe(ops));

    // Record through the public API and derive the oracle's uses from the same ops.
    Graph g = rt.graph();
    testing::OpList uses;
    auto view = [&](const Range& r) { return slice_of(buffers[r.buffer], r.begin, r.end); };
    auto use = [&](const Range& r, Access access) {
      return testing::Use{buffers[r.buffer].id(), r.begin, r.end, access};
    };
    for (const Op& op : ops) {
      switch (op.kind) {
        case OpKind::Fill:
          REQUIRE_OK(g.fill(view(op.dst), op.value));
          uses.push_back({use(op.dst, Access::Write)});
          break;
        case OpKind::Copy:
          REQUIRE_OK(g.copy(view(op.dst), view(op.src)));
          uses.push_back({use(op.dst, Access::Write), use(op.src, Access::Read)});
          break;
        case OpKind::Saxpy:
          REQUIRE_OK(g.host(saxpy, {view(op.src), view(op.dst)}));
          uses.push_back({use(op.src, Access::Read), use(op.dst, Access::ReadWrite)});
          break;
      }
    }
    const ExecutableGraph exec = prepare(std::move(g));
    REQUIRE(exec.nodes() == ops.size());

    const testing::Predecessors expected = testing::frontier_edges(uses);
    testing::Predecessors actual(ops.size());
    for (std::uint32_t i = 0; i < ops.size(); ++i) actual[i] = deps_of(exec, Node{i});
    CHECK(actual == expected);
    if (actual != expected) ++mismatches;

    if (graph_index % kRunEvery == 0) {
      ++runs;
      Memory memory;
      for (std::size_t b = 0; b < kSizes.size(); ++b) {
        memory[b].resize(kSizes[b]);
        if (b == kFloatBuffer) {
          for (std::size_t f = 0; f < kSizes[b] / 4; ++f) {
            const float v = static_cast<float>(static_cast<int>(draw(rng, 0, 128)) - 64) / 8.0f;
            std::memcpy(memory[b].data() + f * 4, &v, 4);
          }
        } else {
          for (auto& byte : memory[b]) byte = static_cast<std::uint8_t>(draw(rng, 0, 255));
        }
        write_bytes(buffers[b], memory[b]);
      }
      run_once(exec);
      simulate(ops, memory);
      for (std::size_t b = 0; b < kSizes.size(); ++b) {
        INFO("buffer " << b << " after running the graph");
        CHECK(read_bytes(buffers[b]) == memory[b]);
      }
    }
  }
  CHECK(mismatches == 0);
  CHECK(runs >= kGraphs / kRunEvery - 1);
}
