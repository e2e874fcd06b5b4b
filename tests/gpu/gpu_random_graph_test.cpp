// 1,000 random small graphs of fills, copies and add_f32 kernels over two host-visible
// and two GPU buffers, across the Upload, Compute and Download lanes: after each graph,
// every buffer's bytes equal serial execution on the CPU. GPU buffers persist between
// graphs, so ordering across submissions is checked too. Skips without a GPU.
#include <cstring>
#include <random>

#include "tests/gpu/gpu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::gpu_test;

namespace {

constexpr std::size_t kFloats = 64;  // per buffer
constexpr std::size_t kBufferBytes = kFloats * sizeof(float);
constexpr std::uint32_t kKernelFloats = 16;
constexpr std::size_t kKernelBytes = kKernelFloats * sizeof(float);
constexpr int kBuffers = 4;  // 0, 1: HostVisible; 2, 3: GpuLocal(0)

using Model = std::array<std::vector<std::uint8_t>, kBuffers>;

struct Range {
  int buffer = 0;
  std::size_t offset = 0;  // bytes, a multiple of 4
  std::size_t length = 0;
};

bool overlap(const Range& a, const Range& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

}  // namespace

TEST_CASE("random GPU graphs end with the bytes of serial CPU execution", "[gpu][random]") {
  RuntimeOptions options;
  options.graph_slots = 1;
  GPU_RUNTIME_OR_SKIP(rt, options);
  const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(kKernelFloats), add_f32_contract(kKernelFloats)));
  std::array<Buffer, kBuffers> buffers = {make_buffer(rt, kBufferBytes), make_buffer(rt, kBufferBytes),
                                          gpu_buffer(rt, kBufferBytes), gpu_buffer(rt, kBufferBytes)};
  // Where GPU buffers are read back after each graph.
  Buffer readback = make_buffer(rt, 2 * kBufferBytes);
  Graph download = rt.graph();
  REQUIRE_OK(download.copy(UNWRAP(readback.slice(0, kBufferBytes)), buffers[2].view()));
  REQUIRE_OK(download.copy(UNWRAP(readback.slice(kBufferBytes, 2 * kBufferBytes)), buffers[3].view()));
  const ExecutableGraph read_gpu = UNWRAP(std::move(download).prepare());

  Model model;
  for (auto& m : model) m.assign(kBufferBytes, 0);
  std::mt19937 rng(20240611);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto random_range = [&](std::size_t floats, int first_buffer, int last_buffer) {
    Range r;
    r.buffer = pick(first_buffer, last_buffer);
    r.length = floats * sizeof(float);
    r.offset = static_cast<std::size_t>(pick(0, static_cast<int>(kFloats - floats))) * sizeof(float);
    return r;
  };
  auto view_of = [&](const Range& r) { return UNWRAP(buffers[static_cast<std::size_t>(r.buffer)].slice(r.offset, r.offset + r.length)); };

  constexpr int kGraphs = 1000;
  for (int graph = 0; graph < kGraphs; ++graph) {
    INFO("graph " << graph);
    // Fresh host inputs: non-negative floats, so every sum is a number (no NaN payloads
    // that could differ between the GPU and the CPU).
    for (int b = 0; b < 2; ++b) {
      std::vector<float> values(kFloats);
      for (float& v : values) v = static_cast<float>(pick(0, 1 << 20)) / 1024.0f;
      std::memcpy(model[static_cast<std::size_t>(b)].data(), values.data(), kBufferBytes);
      write_floats(buffers[static_cast<std::size_t>(b)], values);
    }
    Graph g = rt.graph();
    std::string ops;
    const int count = pick(1, 6);
    for (int op = 0; op < count; ++op) {
      switch (pick(0, 2)) {
        case 0: {  // fill a range of any buffer with a byte below 0x7f (a positive float)
          const Range r = random_range(static_cast<std::size_t>(pick(1, static_cast<int>(kFloats))), 0, 3);
          const auto value = static_cast<std::uint8_t>(pick(0, 0x7e));
          REQUIRE_OK(g.fill(view_of(r), value));
          std::memset(model[static_cast<std::size_t>(r.buffer)].data() + r.offset, value, r.length);
          ops += " fill(" + std::to_string(r.buffer) + ")";
          break;
        }
        case 1: {  // copy between any two buffers (Upload, Download or Compute by direction)
          const std::size_t floats = static_cast<std::size_t>(pick(1, 32));
          const Range dst = random_range(floats, 0, 3);
          const Range src = random_range(floats, 0, 3);
          if (overlap(dst, src)) break;
          REQUIRE_OK(g.copy(view_of(dst), view_of(src)));
          std::memcpy(model[static_cast<std::size_t>(dst.buffer)].data() + dst.offset,
                      model[static_cast<std::size_t>(src.buffer)].data() + src.offset, dst.length);
          ops += " copy(" + std::to_string(dst.buffer) + "<-" + std::to_string(src.buffer) + ")";
          break;
        }
        default: {  // out = a + b on the GPU over GPU buffers
          const Range a = random_range(kKernelFloats, 2, 3);
          const Range b = random_range(kKernelFloats, 2, 3);
          const Range out = random_range(kKernelFloats, 2, 3);
          if (overlap(out, a) || overlap(out, b)) break;
          const std::array<BufferView, 3> views = {view_of(a), view_of(b), view_of(out)};
          REQUIRE_OK(g.gpu(add, views));
          float va[kKernelFloats], vb[kKernelFloats], vo[kKernelFloats];
          std::memcpy(va, model[static_cast<std::size_t>(a.buffer)].data() + a.offset, kKernelBytes);
          std::memcpy(vb, model[static_cast<std::size_t>(b.buffer)].data() + b.offset, kKernelBytes);
          for (std::uint32_t i = 0; i < kKernelFloats; ++i) vo[i] = va[i] + vb[i];
          std::memcpy(model[static_cast<std::size_t>(out.buffer)].data() + out.offset, vo, kKernelBytes);
          ops += " add(" + std::to_string(out.buffer) + ")";
          break;
        }
      }
    }
    INFO("ops:" << ops);
    if (g.size() > 0) run_ok(std::move(g));
    const Completion read = UNWRAP(read_gpu.submit());
    REQUIRE_OK(read.wait());
    const std::vector<std::uint8_t> gpu_bytes = read_bytes(readback);
    REQUIRE(read_bytes(buffers[0]) == model[0]);
    REQUIRE(read_bytes(buffers[1]) == model[1]);
    REQUIRE(std::vector<std::uint8_t>(gpu_bytes.begin(), gpu_bytes.begin() + kBufferBytes) == model[2]);
    REQUIRE(std::vector<std::uint8_t>(gpu_bytes.begin() + kBufferBytes, gpu_bytes.end()) == model[3]);
  }
}
