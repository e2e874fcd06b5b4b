// NPU programs through the public API: matmul, add, relu and softmax on random inputs
// against a CPU reference, and the refusals of a contract that does not match the
// program and of a malformed blob.
#include "tests/npu/npu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::npu_test;

namespace {

// Runs `program` once over `buffers` (in argument order).
void run_program(const Runtime& rt, const Kernel& program, const std::vector<Buffer>& buffers) {
  std::vector<BufferView> views;
  for (const Buffer& b : buffers) views.push_back(b.view());
  Graph g = rt.graph();
  REQUIRE_OK(g.npu(program, std::span<const BufferView>(views)));
  run_once(prepare(std::move(g)));
}

}  // namespace

TEST_CASE("an NPU matmul matches the CPU", "[npu]") {
  const Runtime rt = npu_runtime();
  constexpr std::size_t m = 17, k = 33, n = 9;
  const std::string text = "accord-npu-program 1\ninput a f32 " + dims(m, k) + "\ninput b f32 " + dims(k, n) +
                           "\noutput c f32 " + dims(m, n) + "\nmatmul c a b\n";
  const Kernel program = load_program(rt, text, "matmul", {{m * k, false}, {k * n, false}, {m * n, true}});
  const std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2);
  std::vector<Buffer> buffers{shared_buffer(rt, m * k), shared_buffer(rt, k * n), shared_buffer(rt, m * n)};
  write_floats(buffers[0], a);
  write_floats(buffers[1], b);
  run_program(rt, program, buffers);
  check_close(read_floats(buffers[2]), cpu_matmul(a, b, m, k, n));
}

TEST_CASE("an NPU add and relu match the CPU", "[npu]") {
  const Runtime rt = npu_runtime();
  constexpr std::size_t count = 1000;
  const std::string text = "accord-npu-program 1\ninput x f32 " + dims(count) + "\ninput y f32 " + dims(count) +
                           "\noutput sum f32 " + dims(count) + "\noutput positive f32 " + dims(count) +
                           "\nadd sum x y\nrelu positive x\n";
  const Kernel program =
      load_program(rt, text, "add-relu", {{count, false}, {count, false}, {count, true}, {count, true}});
  const std::vector<float> x = random_floats(count, 3), y = random_floats(count, 4);
  // NpuLocal memory too: it is host-mappable like Shared.
  auto local = rt.allocate(count * sizeof(float), MemoryPlacement::npu_local(0));
  REQUIRE_OK(local);
  std::vector<Buffer> buffers{shared_buffer(rt, count), shared_buffer(rt, count), std::move(local).value(),
                              shared_buffer(rt, count)};
  write_floats(buffers[0], x);
  write_floats(buffers[1], y);
  run_program(rt, program, buffers);
  std::vector<float> sum(count), positive(count);
  for (std::size_t i = 0; i < count; ++i) {
    sum[i] = x[i] + y[i];
    positive[i] = std::max(x[i], 0.0f);
  }
  check_close(read_floats(buffers[2]), sum);
  check_close(read_floats(buffers[3]), positive, 0.0f);
}

TEST_CASE("an NPU softmax matches the CPU", "[npu]") {
  const Runtime rt = npu_runtime();
  constexpr std::size_t rows = 12, cols = 50;
  const std::string text = "accord-npu-program 1\ninput x f32 " + dims(rows, cols) + "\noutput p f32 " +
                           dims(rows, cols) + "\nsoftmax p x\n";
  const Kernel program = load_program(rt, text, "softmax", {{rows * cols, false}, {rows * cols, true}});
  const std::vector<float> x = random_floats(rows * cols, 5, -8.0f, 8.0f);
  std::vector<Buffer> buffers{shared_buffer(rt, rows * cols), shared_buffer(rt, rows * cols)};
  write_floats(buffers[0], x);
  run_program(rt, program, buffers);
  check_close(read_floats(buffers[1]), cpu_softmax(x, rows, cols), 1e-5f);
}

TEST_CASE("an NPU program whose contract does not match its arguments is refused", "[npu]") {
  const Runtime rt = npu_runtime();
  const std::string text =
      "accord-npu-program 1\ninput a f32 2 3\ninput b f32 3 2\noutput c f32 2 2\nmatmul c a b\n";
  // c is 2x2 = 16 bytes; the contract says 12.
  KernelContract wrong_size = npu_contract({{6, false}, {6, false}, {3, true}});
  CHECK_STATUS(rt.load_npu_program(0, blob_of(text), "wrong-size", wrong_size),
               FailsWith(ErrorKind::Invalid, {"argument 2 ('c', output)"}));
  // b is an input, the contract writes it.
  KernelContract wrong_access = npu_contract({{6, false}, {6, true}, {4, true}});
  CHECK_STATUS(rt.load_npu_program(0, blob_of(text), "wrong-access", wrong_access),
               FailsWith(ErrorKind::Invalid, {"argument 1 ('b', input)"}));
  // One binding too few.
  KernelContract too_few = npu_contract({{6, false}, {6, false}});
  CHECK_STATUS(rt.load_npu_program(0, blob_of(text), "too-few", too_few), FailsWith(ErrorKind::Invalid));
}

TEST_CASE("a malformed NPU program is refused with the blob's fault", "[npu]") {
  const Runtime rt = npu_runtime();
  const std::string bad_shapes =
      "accord-npu-program 1\ninput a f32 2 3\ninput b f32 4 2\noutput c f32 2 2\nmatmul c a b\n";
  CHECK_STATUS(rt.load_npu_program(0, blob_of(bad_shapes), "bad-shapes",
                                   npu_contract({{6, false}, {8, false}, {4, true}})),
               FailsWith(ErrorKind::Invalid, {"line 5: matmul shapes do not match"}));
  const std::string bad_magic = "not-a-program 1\noutput c f32 2\n";
  CHECK_STATUS(rt.load_npu_program(0, blob_of(bad_magic), "bad-magic", npu_contract({{2, true}})),
               FailsWith(ErrorKind::Invalid, {"line 1"}));
}
