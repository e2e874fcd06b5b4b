// Host and NPU work in one graph: a host kernel prepares the input on Shared memory
// (NPU pages the host maps too), an NPU program computes softmax(relu(x × w)) — a tiny
// perceptron layer — and a host kernel post-processes its output; the graph orders the
// three from the buffers' accesses. The result is checked against the CPU.
//
//   accord_npu_pipeline_example [--connect SOCKET]
//
// The NPU program is in the NPU emulator's text format
// (daemon/devices/npu_emulator/README.md): start accordd with --npu-emulator, or run
// without --connect (embedded), which sets RuntimeOptions::npu_emulator. Without an NPU
// it says why and exits 0.
#include <accord/accord.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int fail(const char* what, const accord::Status& status) {
  std::fprintf(stderr, "error: %s: %s\n", what, status.to_string().c_str());
  return 1;
}

#define CHECK_OK(var, expr, what)                                   \
  auto var##_result = (expr);                                       \
  if (!var##_result.ok()) return fail(what, var##_result.status()); \
  auto var = std::move(var##_result).value()

constexpr std::uint32_t kRows = 64, kInner = 128, kCols = 32;

std::string program_text() {
  const auto dims = [](std::uint32_t a, std::uint32_t b) { return std::to_string(a) + " " + std::to_string(b); };
  return "accord-npu-program 1\n"
         "input  x     f32 " + dims(kRows, kInner) + "\n"
         "input  w     f32 " + dims(kInner, kCols) + "\n"
         "output probs f32 " + dims(kRows, kCols) + "\n"
         "tensor h     f32 " + dims(kRows, kCols) + "\n"
         "matmul h x w\n"
         "relu   h h\n"
         "softmax probs h\n";
}

accord::BindingContract f32(std::size_t count, accord::Access access) {
  return {count * sizeof(float), alignof(float), access, "f32[" + std::to_string(count) + "]"};
}

accord::Status write(const accord::Buffer& buffer, const std::vector<float>& values) {
  auto guard = buffer.map_write();
  if (!guard.ok()) return guard.status();
  std::memcpy(guard->data(), values.data(), values.size() * sizeof(float));
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--connect") && i + 1 < argc) socket = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--connect SOCKET]\n", argv[0]);
      return 2;
    }
  }
  accord::RuntimeOptions options;
  options.npu_emulator = true;  // embedded only (process-wide); accordd decides for itself
  auto started = socket.empty() ? accord::Runtime::embedded(options) : accord::Runtime::connect(socket);
  if (!started.ok() && socket.empty() && started.status().kind() == accord::ErrorKind::Unsupported) {
    std::printf("no NPU here: %s\n", std::string(started.status().message()).c_str());
    return 0;
  }
  if (!started.ok()) return fail(socket.empty() ? "starting the embedded runtime" : "connecting to accordd",
                                 started.status());
  accord::Runtime runtime = std::move(started).value();

  auto npu = runtime.npu(0);
  if (!npu.ok()) {
    std::printf("no NPU here: %s\n", std::string(npu.status().message()).c_str());
    return 0;
  }
  if (npu->state != accord::DeviceState::Present) {
    std::printf("no NPU here: npu:0 is lost: %s\n", npu->reason.c_str());
    return 0;
  }
  std::printf("npu:0: %s, %s\n", npu->name.c_str(), npu->target.c_str());

  // The NPU program; its contract: inputs Read, outputs Write, in declaration order.
  const std::string text = program_text();
  accord::KernelContract contract;
  contract.bindings = {f32(kRows * kInner, accord::Access::Read), f32(kInner * kCols, accord::Access::Read),
                       f32(kRows * kCols, accord::Access::Write)};
  CHECK_OK(layer, runtime.load_npu_program(0, std::as_bytes(std::span(text.data(), text.size())), "layer", contract),
           "loading the NPU program");
  // Host kernels: x = a + b before the NPU, out = probs + probs after it.
  CHECK_OK(prepare_input, runtime.load_kernel(accord::builtin::add_f32(kRows * kInner)), "loading add_f32");
  CHECK_OK(post, runtime.load_kernel(accord::builtin::add_f32(kRows * kCols)), "loading add_f32");

  // Buffers: the NPU's operands on Shared memory, host-only ones HostVisible.
  const auto shared = accord::MemoryPlacement::shared(0);
  CHECK_OK(a, runtime.allocate(kRows * kInner * sizeof(float)), "allocating a");
  CHECK_OK(b, runtime.allocate(kRows * kInner * sizeof(float)), "allocating b");
  CHECK_OK(x, runtime.allocate(kRows * kInner * sizeof(float), shared), "allocating x (Shared)");
  CHECK_OK(w, runtime.allocate(kInner * kCols * sizeof(float), shared), "allocating w (Shared)");
  CHECK_OK(probs, runtime.allocate(kRows * kCols * sizeof(float), shared), "allocating probs (Shared)");
  CHECK_OK(out, runtime.allocate(kRows * kCols * sizeof(float)), "allocating out");

  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> va(kRows * kInner), vb(kRows * kInner), vw(kInner * kCols);
  for (float& f : va) f = dist(gen);
  for (float& f : vb) f = dist(gen);
  for (float& f : vw) f = dist(gen);
  for (auto [buffer, values] : {std::pair{&a, &va}, std::pair{&b, &vb}, std::pair{&w, &vw}})
    if (accord::Status s = write(*buffer, *values); !s.ok()) return fail("writing inputs", s);

  // host -> NPU -> host: the edges come from the buffers (x, then probs).
  accord::Graph graph = runtime.graph();
  CHECK_OK(n_prepare, graph.host(prepare_input, {a.view(), b.view(), x.view()}), "recording the host input kernel");
  CHECK_OK(n_layer, graph.npu(layer, {x.view(), w.view(), probs.view()}), "recording the NPU program");
  CHECK_OK(n_post, graph.host(post, {probs.view(), probs.view(), out.view()}), "recording the host output kernel");
  CHECK_OK(exe, std::move(graph).prepare(), "preparing");
  for (accord::Node node : {n_layer, n_post}) {
    std::printf("node %u waits for:", node.index);
    for (accord::Node dep : exe.dependencies(node)) std::printf(" %u", dep.index);
    std::printf("\n");
  }
  static_cast<void>(n_prepare);
  CHECK_OK(done, exe.submit(), "submitting");
  if (accord::Status s = done.wait(); !s.ok()) return fail("running the pipeline", s);

  // The CPU's answer.
  std::vector<float> want(kRows * kCols);
  for (std::uint32_t r = 0; r < kRows; ++r) {
    std::vector<float> h(kCols, 0.0f);
    for (std::uint32_t c = 0; c < kCols; ++c) {
      for (std::uint32_t i = 0; i < kInner; ++i)
        h[c] += (va[r * kInner + i] + vb[r * kInner + i]) * vw[i * kCols + c];
      h[c] = std::max(h[c], 0.0f);
    }
    const float max = *std::max_element(h.begin(), h.end());
    float sum = 0;
    for (float v : h) sum += std::exp(v - max);
    for (std::uint32_t c = 0; c < kCols; ++c) want[r * kCols + c] = 2.0f * std::exp(h[c] - max) / sum;
  }
  CHECK_OK(view, out.map_read(), "reading the result");
  std::size_t wrong = 0;
  const auto* got = reinterpret_cast<const float*>(view.bytes().data());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4f * std::max(1.0f, std::fabs(want[i])))) ++wrong;
  if (wrong != 0) {
    std::printf("result: WRONG (%zu of %zu values differ from the CPU)\n", wrong, want.size());
    return 1;
  }
  std::printf("result: correct (%u x %u softmax(relu(x w)) on npu:0, checked against the CPU)\n", kRows, kCols);
  return 0;
}
