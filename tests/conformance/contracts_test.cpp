// Record-time checks (ARCHITECTURE.md engine item 11, seed 2.3/2.14/2.22): kernel
// binding count, minimum extent, offset alignment, writable aliasing, runtime ownership,
// copy ranges, slices, kernel loading against contracts, unsupported devices and
// placements, empty graphs. Every refusal must say what was wrong; a refused call records nothing.
#include <catch2/catch.hpp>

#include "tests/conformance/conformance_helpers.h"

using namespace accord;
using namespace accord::conformance;

TEST_CASE("a kernel call with the wrong number of bindings is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 1.0f);
  const Buffer a = make_buffer(rt, 16);
  const Buffer b = make_buffer(rt, 16);
  const Buffer c = make_buffer(rt, 16);
  Graph g = rt.graph();
  CHECK_STATUS(g.host(scale, {a.view()}), FailsWith(ErrorKind::Invalid, {"binding"}));
  CHECK_STATUS(g.host(scale, {a.view(), b.view(), c.view()}), FailsWith(ErrorKind::Invalid, {"binding"}));
  CHECK(g.size() == 0);
  CHECK_OK(g.host(scale, {a.view(), b.view()}));
  CHECK(g.size() == 1);
}

TEST_CASE("a binding shorter than the contract's minimum extent is Invalid and named",
          "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 8, 1.0f);  // 32 bytes each
  const Buffer in = make_buffer(rt, 64);
  const Buffer out = make_buffer(rt, 64);
  Graph g = rt.graph();
  const auto refused = g.host(scale, {in.view(), slice_of(out, 0, 28)});
  CHECK_STATUS(refused, FailsWith(ErrorKind::Invalid, {"binding 1"}));
  CHECK_STATUS(refused, FailsWith(ErrorKind::Invalid, {"extent", "shorter", "bytes", "small"}));
  CHECK(g.size() == 0);
  // Longer than the minimum is fine: the contract states a minimum.
  CHECK_OK(g.host(scale, {in.view(), slice_of(out, 0, 36)}));
}

TEST_CASE("a binding offset that breaks the contract's alignment is Invalid and named",
          "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 1.0f);  // alignment 4
  const Buffer in = make_buffer(rt, 64);
  const Buffer out = make_buffer(rt, 64);
  Graph g = rt.graph();
  const auto refused = g.host(scale, {slice_of(in, 2, 18), out.view()});
  CHECK_STATUS(refused, FailsWith(ErrorKind::Invalid, {"align"}));
  CHECK_STATUS(refused, FailsWith(ErrorKind::Invalid, {"binding 0"}));
  CHECK(g.size() == 0);
  CHECK_OK(g.host(scale, {slice_of(in, 4, 20), out.view()}));
}

TEST_CASE("overlapping writable bindings are Invalid unless aliasing is allowed", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 1.0f);  // in Read, out Write, 16 bytes
  const Buffer x = make_buffer(rt, 64);
  const std::vector<BufferView> overlapping{slice_of(x, 0, 16), slice_of(x, 8, 24)};
  Graph g = rt.graph();
  CHECK_STATUS(g.host(scale, overlapping), FailsWith(ErrorKind::Invalid, {"overlap", "alias"}));
  CHECK(g.size() == 0);
  CHECK_OK(g.host_aliasing(scale, overlapping));
  // Disjoint views of one allocation are not aliasing.
  CHECK_OK(g.host(scale, {slice_of(x, 0, 16), slice_of(x, 16, 32)}));
  CHECK(g.size() == 2);
}

TEST_CASE("overlapping read-only bindings are allowed", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  constexpr std::uint32_t kCount = 4;
  const Kernel add = load_builtin(rt, builtin::add_f32(kCount));  // a Read, b Read, out Write
  const Buffer x = make_buffer(rt, kCount * 4);
  const Buffer y = make_buffer(rt, kCount * 4);
  write_floats(x, {1, 2, 3, 4});
  Graph g = rt.graph();
  REQUIRE_OK(g.host(add, {x.view(), x.view(), y.view()}));
  const ExecutableGraph exec = prepare(std::move(g));
  run_once(exec);
  CHECK(read_floats(y) == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("views and kernels of another runtime are Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  CONFORMANCE_RUNTIME(other);
  const Buffer mine = make_buffer(rt, 16);
  const Buffer theirs = make_buffer(other, 16);
  CHECK(rt.owns(mine.view()));
  CHECK_FALSE(rt.owns(theirs.view()));
  CHECK(other.owns(theirs.view()));

  Graph g = rt.graph();
  CHECK_STATUS(g.fill(theirs.view(), 1), FailsWith(ErrorKind::Invalid, {"runtime", "session"}));
  CHECK_STATUS(g.copy(mine.view(), theirs.view()), FailsWith(ErrorKind::Invalid, {"runtime", "session"}));
  CHECK_STATUS(g.copy(theirs.view(), mine.view()), FailsWith(ErrorKind::Invalid, {"runtime", "session"}));
  const Kernel foreign = load_scale(other, 4, 1.0f);
  const Buffer out = make_buffer(rt, 16);
  CHECK_STATUS(g.host(foreign, {mine.view(), out.view()}), FailsWith(ErrorKind::Invalid, {"runtime", "session", "kernel"}));
  CHECK(g.size() == 0);
}

TEST_CASE("submit_after a producer of another runtime is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  CONFORMANCE_RUNTIME(other);
  const Buffer a = make_buffer(rt, 8);
  const Buffer b = make_buffer(other, 8);
  const ExecutableGraph mine = fill_graph(rt, a.view(), 1);
  const ExecutableGraph theirs = fill_graph(other, b.view(), 2);
  const Completion foreign = UNWRAP(theirs.submit());
  REQUIRE_OK(foreign.wait());
  CHECK_STATUS(mine.submit_after(std::span<const Completion>(&foreign, 1)),
             FailsWith(ErrorKind::Invalid, {"runtime", "session", "producer"}));
}

TEST_CASE("a copy needs equal, non-overlapping ranges", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  const Buffer b = make_buffer(rt, 64);
  Graph g = rt.graph();
  CHECK_STATUS(g.copy(slice_of(b, 0, 16), slice_of(a, 0, 17)), FailsWith(ErrorKind::Invalid, {"equal", "length", "size"}));
  CHECK_STATUS(g.copy(slice_of(a, 0, 16), slice_of(a, 8, 24)), FailsWith(ErrorKind::Invalid, {"overlap"}));
  CHECK_STATUS(g.copy_on(slice_of(a, 0, 16), slice_of(a, 8, 24), GpuLane::Upload),
             FailsWith(ErrorKind::Invalid, {"overlap"}));
  CHECK_STATUS(g.copy(a.view(), a.view()), FailsWith(ErrorKind::Invalid, {"overlap"}));
  CHECK(g.size() == 0);
  CHECK_OK(g.copy(slice_of(a, 0, 16), slice_of(a, 16, 32)));  // adjacent within one buffer
  CHECK(g.size() == 1);
}

TEST_CASE("a slice out of bounds is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 64);
  CHECK_STATUS(a.slice(0, 65), FailsWith(ErrorKind::Invalid, {"out of bounds", "bounds", "outside"}));
  CHECK_STATUS(a.slice(10, 9), FailsWith(ErrorKind::Invalid, {"out of bounds", "bounds", "outside"}));
  const BufferView middle = slice_of(a, 16, 32);
  CHECK_STATUS(middle.slice(0, 17), FailsWith(ErrorKind::Invalid, {"out of bounds", "bounds", "outside"}));
  const BufferView inner = UNWRAP(middle.slice(4, 16));  // relative to the view
  CHECK(inner.offset() == 20);
  CHECK(inner.size() == 12);
  const BufferView whole = UNWRAP(a.slice(0, 64));
  CHECK(whole.size() == 64);
}

TEST_CASE("empty handles are Invalid to record", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Buffer a = make_buffer(rt, 16);
  Graph g = rt.graph();
  CHECK_FAILS_WITH(Invalid, g.fill(BufferView(), 1));
  CHECK_FAILS_WITH(Invalid, g.copy(a.view(), BufferView()));
  CHECK_FAILS_WITH(Invalid, g.host(Kernel(), {a.view()}));
  CHECK_FAILS_WITH(Invalid, Buffer().map_read());
  CHECK(g.size() == 0);
}

TEST_CASE("loading a kernel whose contract does not match it is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  SECTION("built-in: wrong binding count") {
    builtin::KernelSpec spec = builtin::add_f32(4);
    spec.contract.bindings.pop_back();
    CHECK_STATUS(rt.load_kernel(spec), FailsWith(ErrorKind::Invalid, {"binding"}));
  }
  SECTION("built-in: wrong constant bytes") {
    builtin::KernelSpec spec = builtin::add_f32(4);
    spec.contract.constants.push_back(std::byte{0});
    CHECK_STATUS(rt.load_kernel(spec), FailsWith(ErrorKind::Invalid, {"constant"}));
  }
  SECTION("built-in: understated access") {
    builtin::KernelSpec spec = builtin::relu_f32(4);
    spec.contract.bindings[1].access = Access::Read;  // the kernel writes `out`
    CHECK_STATUS(rt.load_kernel(spec), FailsWith(ErrorKind::Invalid, {"access", "write"}));
  }
  SECTION("built-in: structurally invalid contract") {
    builtin::KernelSpec spec = builtin::relu_f32(4);
    spec.contract.bindings[0].alignment = 3;
    CHECK_STATUS(rt.load_kernel(spec), FailsWith(ErrorKind::Invalid, {"align"}));
  }
  SECTION("plugin: wrong binding count") {
    KernelContract c = scale_contract(4, 1.0f);
    c.bindings.pop_back();
    CHECK_STATUS(rt.load_plugin_kernel(plugin_path(), "test.scale_f32", c), FailsWith(ErrorKind::Invalid, {"binding"}));
  }
  SECTION("plugin: wrong constant bytes") {
    KernelContract c = sleep_contract(10);
    c.constants.resize(8);
    CHECK_STATUS(rt.load_plugin_kernel(plugin_path(), "test.sleep_us", c), FailsWith(ErrorKind::Invalid, {"constant"}));
  }
  SECTION("plugin: understated access") {
    KernelContract c = fail_contract();
    c.bindings[0].access = Access::Read;  // the plugin declares ReadWrite
    CHECK_STATUS(rt.load_plugin_kernel(plugin_path(), "test.fail", c), FailsWith(ErrorKind::Invalid, {"access"}));
  }
  SECTION("plugin: weaker alignment than the code needs") {
    KernelContract c = scale_contract(4, 1.0f);
    c.bindings[0].alignment = 1;  // the plugin needs 4
    CHECK_STATUS(rt.load_plugin_kernel(plugin_path(), "test.scale_f32", c), FailsWith(ErrorKind::Invalid, {"align"}));
  }
}

TEST_CASE("loading a kernel that does not exist fails and names it", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  CHECK_STATUS(rt.load_kernel("accord.no_such_kernel", builtin::relu_f32(4).contract),
             FailsWith(ErrorKind::Unsupported, {"accord.no_such_kernel"}));
  CHECK_STATUS(rt.load_plugin_kernel(plugin_path(), "test.no_such_kernel", fail_contract()),
             Fails({"test.no_such_kernel"}));
  CHECK_STATUS(rt.load_plugin_kernel("/nonexistent/accord_plugin.so", "test.fail", fail_contract()),
             Fails({"/nonexistent/accord_plugin.so"}));
}

TEST_CASE("a plugin built with another sanitizer is refused", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const std::string badsan = ACCORD_TEST_PLUGIN_BADSAN_PATH;
  INFO("ACCORD_TEST_PLUGIN_BADSAN_PATH is empty: tests/plugins did not define accord_test_plugin_badsan");
  REQUIRE_FALSE(badsan.empty());
  CHECK_STATUS(rt.load_plugin_kernel(badsan, "test.fail", fail_contract()), Fails({"sanitizer"}));
}

TEST_CASE("GPU and NPU work is Unsupported without those devices", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const Kernel scale = load_scale(rt, 4, 1.0f);
  const Buffer a = make_buffer(rt, 16);
  const Buffer b = make_buffer(rt, 16);
  const std::vector<BufferView> bindings{a.view(), b.view()};
  Graph g = rt.graph();
  CHECK_STATUS(g.gpu(scale, bindings), FailsWith(ErrorKind::Unsupported, {"gpu"}));
  CHECK_STATUS(g.npu(scale, bindings), FailsWith(ErrorKind::Unsupported, {"npu"}));
  CHECK(g.size() == 0);
}

TEST_CASE("a kernel loads onto the device it names, and not onto one that is not here",
          "[conformance][contracts][devices]") {
  CONFORMANCE_RUNTIME(rt);
  const builtin::KernelSpec spec = builtin::add_f32(16);
  const Kernel implicit = load_builtin(rt, spec);
  CHECK(implicit.device() == DeviceId::host());
  auto named = rt.load_kernel(DeviceId::host(), spec.name, spec.contract);
  REQUIRE_OK(named);
  CHECK(named.value().device() == DeviceId::host());
  CHECK(named.value().name() == spec.name);
  CHECK_STATUS(rt.load_kernel(DeviceId::gpu(7), spec.name, spec.contract),
               FailsWith(ErrorKind::Unsupported, {"gpu:7"}));
  CHECK_STATUS(rt.load_kernel(DeviceId::npu(0), spec.name, spec.contract),
               FailsWith(ErrorKind::Unsupported, {"npu:0"}));
}

TEST_CASE("RuntimeOptions::devices names the backends the engine opens", "[conformance][contracts][devices]") {
  RuntimeOptions with_null;
  with_null.devices = {"host", "null"};
  CONFORMANCE_RUNTIME(rt, with_null);
  // gpu:0 is there now, and it is the null device that refuses (it runs no code), not
  // "no such device".
  const builtin::KernelSpec spec = builtin::add_f32(16);
  CHECK_STATUS(rt.load_kernel(DeviceId::gpu(0), spec.name, spec.contract),
               FailsWith(ErrorKind::Unsupported, {"null device"}));
  CHECK_OK(rt.load_kernel(DeviceId::host(), spec.name, spec.contract));

  RuntimeOptions unknown;
  unknown.devices = {"host", "doesnotexist"};
  CHECK_STATUS(make_conformance_runtime(unknown), FailsWith(ErrorKind::Invalid, {"built: host, null"}));
}

TEST_CASE("device-local placements are Unsupported without those devices", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  // Where the machine has the device (a GPU box, the NPU emulator), the allocation
  // succeeds instead; both outcomes are checked, never skipped.
  auto gpu = rt.allocate(64, MemoryPlacement::gpu_local());
  if (gpu.ok()) CHECK(gpu.value().size() == 64);
  else CHECK_STATUS(gpu, FailsWith(ErrorKind::Unsupported, {"gpu"}));
  auto npu = rt.allocate(64, MemoryPlacement::npu_local());
  if (npu.ok()) CHECK(npu.value().size() == 64);
  else CHECK_STATUS(npu, FailsWith(ErrorKind::Unsupported, {"npu"}));
  auto shared = rt.allocate(64, MemoryPlacement::shared());
  if (shared.ok()) CHECK(shared.value().size() == 64);
  else CHECK_STATUS(shared, FailsWith(ErrorKind::Unsupported, {"npu", "shared"}));
}

TEST_CASE("a zero-byte allocation is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const std::uint64_t allocations = rt.statistics().allocations;
  CHECK_STATUS(rt.allocate(0), FailsWith(ErrorKind::Invalid, {"zero", "0 bytes", "bytes", "size"}));
  CHECK(rt.statistics().allocations == allocations);
}

TEST_CASE("preparing an empty graph is Invalid", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  Graph g = rt.graph();
  CHECK_STATUS(std::move(g).prepare(), FailsWith(ErrorKind::Invalid, {"empty", "no operation", "nothing"}));
}

TEST_CASE("a loaded kernel reports its name and contract", "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  const builtin::KernelSpec spec = builtin::matmul_f32(2, 3, 4);
  const Kernel k = load_builtin(rt, spec);
  CHECK(k.valid());
  CHECK(k.name() == "accord.matmul_f32");
  REQUIRE(k.contract().bindings.size() == 3);
  CHECK(k.contract().bindings[2].bytes == 2 * 4 * sizeof(float));
  CHECK(k.contract().constants == spec.contract.constants);
}

TEST_CASE("allocations are zero-initialised host-visible storage, even when memory is reused",
          "[conformance][contracts]") {
  CONFORMANCE_RUNTIME(rt);
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    const Buffer b = make_buffer(rt, 8192);
    CHECK(b.valid());
    CHECK(b.size() == 8192);
    CHECK(b.placement() == MemoryPlacement::host_visible());
    CHECK(b.view().is_host_visible());
    CHECK(b.view().size() == 8192);
    CHECK(b.view().offset() == 0);
    CHECK(read_bytes(b) == repeated(8192, 0));
    fill_on_host(b, 0xFF);  // dirty it before it is freed
  }
  const Buffer first = make_buffer(rt, 16);
  const Buffer second = make_buffer(rt, 16);
  CHECK(first.id() != second.id());
  CHECK_FALSE(first == second);
}
