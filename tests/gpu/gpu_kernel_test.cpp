// GPU kernels through the public API: a PTX kernel against a CPU reference, an upload
// racing a kernel that reads the same buffer, and images the backend must refuse (the
// wrong target, a contract with the wrong parameters). Skips without a GPU.
#include <algorithm>
#include <random>

#include "tests/gpu/gpu_helpers.h"

using namespace accord;
using namespace accord::conformance;
using namespace accord::gpu_test;

TEST_CASE("a PTX kernel matches the CPU on random inputs", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  std::mt19937 rng(7);
  for (const std::uint32_t count : {1u, 255u, 4096u, 100'003u}) {
    INFO("count " << count);
    const std::size_t bytes = std::size_t{count} * sizeof(float);
    std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
    std::vector<float> a(count), b(count);
    for (std::uint32_t i = 0; i < count; ++i) a[i] = dist(rng), b[i] = dist(rng);
    Buffer ha = make_buffer(rt, bytes), hb = make_buffer(rt, bytes), hout = make_buffer(rt, bytes);
    write_floats(ha, a);
    write_floats(hb, b);
    Buffer ga = gpu_buffer(rt, bytes), gb = gpu_buffer(rt, bytes), gout = gpu_buffer(rt, bytes);
    const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(count), add_f32_contract(count)));
    CHECK(add.device() == DeviceId::gpu(0));
    Graph g = rt.graph();
    REQUIRE_OK(g.copy(ga.view(), ha.view()));
    REQUIRE_OK(g.copy(gb.view(), hb.view()));
    REQUIRE_OK(g.gpu(add, {ga.view(), gb.view(), gout.view()}));
    REQUIRE_OK(g.copy(hout.view(), gout.view()));
    run_ok(std::move(g));
    const std::vector<float> out = read_floats(hout);
    std::size_t wrong = 0;
    for (std::uint32_t i = 0; i < count; ++i) wrong += out[i] != a[i] + b[i];
    CHECK(wrong == 0);
  }
}

TEST_CASE("a GPU kernel records only through Graph::gpu and only on a GPU", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(16), add_f32_contract(16)));
  Buffer a = gpu_buffer(rt, 64), b = gpu_buffer(rt, 64), c = gpu_buffer(rt, 64);
  Graph g = rt.graph();
  // Invalid naming gpu:0 where an NPU exists, Unsupported (no npu here) otherwise.
  CHECK_STATUS(g.npu(add, {a.view(), b.view(), c.view()}), Fails({"npu"}));
  CHECK_STATUS(g.gpu(add, {a.view(), b.view()}), FailsWith(ErrorKind::Invalid, {"binding"}));
  const Kernel host_add = UNWRAP(rt.load_kernel(builtin::add_f32(16)));
  CHECK_STATUS(g.gpu(host_add, {a.view(), b.view(), c.view()}), FailsWith(ErrorKind::Invalid, {"host"}));
  CHECK(g.size() == 0);
}

TEST_CASE("an upload racing a kernel that reads its destination is ordered", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  constexpr std::uint32_t kCount = 1u << 22;  // 16 MiB: long enough for a race to show
  constexpr std::size_t kBytes = std::size_t{kCount} * sizeof(float);
  Buffer ones = make_buffer(rt, kBytes), threes = make_buffer(rt, kBytes);
  write_floats(ones, std::vector<float>(kCount, 1.0f));
  write_floats(threes, std::vector<float>(kCount, 3.0f));
  Buffer in = gpu_buffer(rt, kBytes), out1 = gpu_buffer(rt, kBytes), out2 = gpu_buffer(rt, kBytes);
  Buffer host1 = make_buffer(rt, kBytes), host2 = make_buffer(rt, kBytes);
  const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(kCount), add_f32_contract(kCount)));
  Graph g = rt.graph();
  REQUIRE_OK(g.copy(in.view(), ones.view()));                      // upload 1s
  REQUIRE_OK(g.gpu(add, {in.view(), in.view(), out1.view()}));     // RAW: reads the 1s
  REQUIRE_OK(g.copy(in.view(), threes.view()));                    // WAR: must wait for the kernel
  REQUIRE_OK(g.gpu(add, {in.view(), in.view(), out2.view()}));     // RAW: reads the 3s
  REQUIRE_OK(g.copy(host1.view(), out1.view()));
  REQUIRE_OK(g.copy(host2.view(), out2.view()));
  const ExecutableGraph exe = UNWRAP(std::move(g).prepare());
  for (int run = 0; run < 5; ++run) {
    INFO("run " << run);
    const Completion done = UNWRAP(exe.submit());
    REQUIRE_OK(done.wait());
    const std::vector<float> r1 = read_floats(host1), r2 = read_floats(host2);
    CHECK(std::count(r1.begin(), r1.end(), 2.0f) == static_cast<std::ptrdiff_t>(kCount));
    CHECK(std::count(r2.begin(), r2.end(), 6.0f) == static_cast<std::ptrdiff_t>(kCount));
  }
}

TEST_CASE("a cubin for another GPU architecture is refused naming both targets", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  const bool on_sm80 = rt_gpu.gpu.target == "sm_80";
  const std::string wrong = on_sm80 ? "sm_90" : "sm_80";
  const unsigned char* data = on_sm80 ? accord_gpu_test_sm90 : accord_gpu_test_sm80;
  const unsigned long size = on_sm80 ? accord_gpu_test_sm90_size : accord_gpu_test_sm80_size;
  GpuKernelImage image = add_f32_image(16);
  image.image = embedded_bytes(data, size, false);
  auto loaded = rt.load_gpu_kernel(0, image, add_f32_contract(16));
  INFO("gpu:0 is " << rt_gpu.gpu.target);
  CHECK_STATUS(loaded, FailsWith(ErrorKind::Invalid, {wrong}));
  if (!loaded.ok()) CHECK_THAT(std::string(loaded.status().message()), Catch::Matchers::Contains(rt_gpu.gpu.target));
}

TEST_CASE("a contract with the wrong parameters is refused naming the parameter", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  KernelContract contract = add_f32_contract(16);
  contract.bindings.pop_back();  // add_f32 takes three pointers and a count
  auto loaded = rt.load_gpu_kernel(0, add_f32_image(16), contract);
  if (!loaded.ok() && loaded.status().kind() == ErrorKind::Unsupported &&
      std::string(loaded.status().message()).find("cuFuncGetParamInfo") != std::string::npos) {
    WARN("skipped: " << loaded.status().message());
    return;
  }
  CHECK_STATUS(loaded, FailsWith(ErrorKind::Invalid, {"parameter"}));
}

TEST_CASE("a large GPU image loads (over the daemon: as a sealed memfd)", "[gpu]") {
  GPU_RUNTIME_OR_SKIP(rt);
  // PTX padded with comment lines past accordd's default max_message_bytes (4 MiB).
  GpuKernelImage image = add_f32_image(16);
  image.image.pop_back();  // the NUL
  const std::string padding = "\n// padding padding padding padding padding padding padding padding\n";
  while (image.image.size() < (6u << 20))
    for (char ch : padding) image.image.push_back(static_cast<std::byte>(ch));
  image.image.push_back(std::byte{0});
  CHECK_OK(rt.load_gpu_kernel(0, image, add_f32_contract(16)));
}

TEST_CASE("a session priority is granted and work still runs", "[gpu]") {
  RuntimeOptions options;
  options.priority = -3;  // anyone may ask for less
  GPU_RUNTIME_OR_SKIP(rt, options);
  const Kernel add = UNWRAP(rt.load_gpu_kernel(0, add_f32_image(64), add_f32_contract(64)));
  Buffer h = make_buffer(rt, 256), out = make_buffer(rt, 256);
  write_floats(h, std::vector<float>(64, 1.5f));
  Buffer a = gpu_buffer(rt, 256), c = gpu_buffer(rt, 256);
  Graph g = rt.graph();
  REQUIRE_OK(g.copy(a.view(), h.view()));
  REQUIRE_OK(g.gpu(add, {a.view(), a.view(), c.view()}));
  REQUIRE_OK(g.copy(out.view(), c.view()));
  run_ok(std::move(g));
  const std::vector<float> r = read_floats(out);
  CHECK(std::count(r.begin(), r.end(), 3.0f) == 64);
}
