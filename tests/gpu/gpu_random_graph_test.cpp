// 1,000 random small graphs of fills, copies and add_f32 kernels over two host-visible
// buffers and two GPU buffers per GPU, across the Upload, Compute and Download lanes:
// after each graph, every buffer's bytes equal serial execution on the CPU. GPU buffers
// persist between graphs, so ordering across submissions is checked too. Once on gpu:0
// (skips without a GPU), once across gpu:0 and gpu:1 with copies between them in both
// directions (skips with fewer than two GPUs).
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
constexpr int kHostBuffers = 2;  // 0, 1: HostVisible; then two GpuLocal(g) per GPU g

using Model = std::vector<std::vector<std::uint8_t>>;

struct Range {
  int buffer = 0;
  std::size_t offset = 0;  // bytes, a multiple of 4
  std::size_t length = 0;
};

bool overlap(const Range& a, const Range& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

// `gpus` GPUs (1 or 2), each with buffers 2 + 2g and 3 + 2g and its own add_f32.
void run_random_graphs(Runtime& rt, int gpus) {
  const int buffer_count = kHostBuffers + 2 * gpus;
  std::vector<Kernel> adds;
  for (int g = 0; g < gpus; ++g)
    adds.push_back(
        UNWRAP(rt.load_gpu_kernel(g, add_f32_image(kKernelFloats), add_f32_contract(kKernelFloats))));
  std::vector<Buffer> buffers = {make_buffer(rt, kBufferBytes), make_buffer(rt, kBufferBytes)};
  for (int g = 0; g < gpus; ++g)
    for (int i = 0; i < 2; ++i) buffers.push_back(gpu_buffer(rt, kBufferBytes, g));
  // Where GPU buffers are read back after each graph.
  Buffer readback = make_buffer(rt, static_cast<std::size_t>(2 * gpus) * kBufferBytes);
  Graph download = rt.graph();
  for (int b = kHostBuffers; b < buffer_count; ++b) {
    const std::size_t at = static_cast<std::size_t>(b - kHostBuffers) * kBufferBytes;
    REQUIRE_OK(download.copy(UNWRAP(readback.slice(at, at + kBufferBytes)), buffers[static_cast<std::size_t>(b)].view()));
  }
  const ExecutableGraph read_gpu = UNWRAP(std::move(download).prepare());

  Model model(static_cast<std::size_t>(buffer_count));
  for (auto& m : model) m.assign(kBufferBytes, 0);
  std::mt19937 rng(20240611 + static_cast<unsigned>(gpus));
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
          const Range r = random_range(static_cast<std::size_t>(pick(1, static_cast<int>(kFloats))), 0, buffer_count - 1);
          const auto value = static_cast<std::uint8_t>(pick(0, 0x7e));
          REQUIRE_OK(g.fill(view_of(r), value));
          std::memset(model[static_cast<std::size_t>(r.buffer)].data() + r.offset, value, r.length);
          ops += " fill(" + std::to_string(r.buffer) + ")";
          break;
        }
        case 1: {  // copy between any two buffers (Upload, Download or Compute by direction;
                   // between GPUs, on the destination's GPU)
          const std::size_t floats = static_cast<std::size_t>(pick(1, 32));
          const Range dst = random_range(floats, 0, buffer_count - 1);
          const Range src = random_range(floats, 0, buffer_count - 1);
          if (overlap(dst, src)) break;
          REQUIRE_OK(g.copy(view_of(dst), view_of(src)));
          std::memcpy(model[static_cast<std::size_t>(dst.buffer)].data() + dst.offset,
                      model[static_cast<std::size_t>(src.buffer)].data() + src.offset, dst.length);
          ops += " copy(" + std::to_string(dst.buffer) + "<-" + std::to_string(src.buffer) + ")";
          break;
        }
        default: {  // out = a + b on one GPU over that GPU's buffers
          const int gpu = pick(0, gpus - 1);
          const int first = kHostBuffers + 2 * gpu;
          const Range a = random_range(kKernelFloats, first, first + 1);
          const Range b = random_range(kKernelFloats, first, first + 1);
          const Range out = random_range(kKernelFloats, first, first + 1);
          if (overlap(out, a) || overlap(out, b)) break;
          const std::array<BufferView, 3> views = {view_of(a), view_of(b), view_of(out)};
          REQUIRE_OK(g.gpu(adds[static_cast<std::size_t>(gpu)], views));
          float va[kKernelFloats], vb[kKernelFloats], vo[kKernelFloats];
          std::memcpy(va, model[static_cast<std::size_t>(a.buffer)].data() + a.offset, kKernelBytes);
          std::memcpy(vb, model[static_cast<std::size_t>(b.buffer)].data() + b.offset, kKernelBytes);
          for (std::uint32_t i = 0; i < kKernelFloats; ++i) vo[i] = va[i] + vb[i];
          std::memcpy(model[static_cast<std::size_t>(out.buffer)].data() + out.offset, vo, kKernelBytes);
          ops += " add" + std::to_string(gpu) + "(" + std::to_string(out.buffer) + ")";
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
    for (int b = kHostBuffers; b < buffer_count; ++b) {
      INFO("buffer " << b);
      const auto at = gpu_bytes.begin() + static_cast<std::ptrdiff_t>(b - kHostBuffers) * static_cast<std::ptrdiff_t>(kBufferBytes);
      REQUIRE(std::vector<std::uint8_t>(at, at + static_cast<std::ptrdiff_t>(kBufferBytes)) == model[static_cast<std::size_t>(b)]);
    }
  }
}

}  // namespace

TEST_CASE("random GPU graphs end with the bytes of serial CPU execution", "[gpu][random]") {
  RuntimeOptions options;
  options.graph_slots = 1;
  GPU_RUNTIME_OR_SKIP(rt, options);
  run_random_graphs(rt, 1);
}

TEST_CASE("random graphs across two GPUs, copies between them both ways, end with serial execution's bytes",
          "[gpu][random][two-gpus]") {
  RuntimeOptions options;
  options.graph_slots = 1;
  GPU_RUNTIME_OR_SKIP(rt, options);
  const auto second = rt.gpu(1);
  if (!second.ok() || second->backend != "cuda") {
    WARN("skipped: needs two CUDA GPUs, found 1 ("
         << (second.ok() ? "gpu:1 is " + second->backend : std::string(second.status().message())) << ")");
    return;
  }
  run_random_graphs(rt, 2);
}
