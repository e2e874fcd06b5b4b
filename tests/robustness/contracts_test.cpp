// Out-of-range views, kernel contracts that disagree with the kernel, kernel nodes whose
// views violate the contract, and malformed graphs and submissions.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

}  // namespace

TEST_CASE("views outside their buffer are INVALID_ARGUMENT naming node and binding", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  constexpr std::uint64_t kBytes = 4096;
  std::uint64_t buffer = 0, other = 0;
  REQUIRE_OK(allocate(stub, s, kBytes, &buffer));
  REQUIRE_OK(allocate(stub, s, kBytes, &other));

  struct Range {
    std::uint64_t offset, length;
  };
  const std::vector<Range> bad = {
      {4000, 200},                  // past the end
      {0, kBytes + 1},              // one byte too long
      {kBytes + 1, 0},              // starts past the end
      {kBytes, 1},                  // starts at the end
      {kMax, 1},                    // offset at UINT64_MAX
      {1, kMax},                    // length at UINT64_MAX
      {kMax - 100, 200},            // offset + length wraps to 99
      {kBytes, kMax - kBytes + 1},  // offset + length wraps to exactly 0
      {kMax, kMax},                 // both
  };
  for (const Range& r : bad) {
    INFO("view offset " << r.offset << " length " << r.length);
    // As the only node's fill destination.
    {
      v1::PrepareGraphRequest request;
      add_fill(request, buffer, r.offset, r.length, 1);
      CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 0 binding 0",
                   "outside the allocation");
    }
    // As the source of node 2 of a longer graph.
    {
      v1::PrepareGraphRequest request;
      add_fill(request, buffer, 0, 64, 1);
      add_fill(request, other, 0, 64, 2);
      v1::CopyOp* copy = request.add_nodes()->mutable_copy();
      set_view(copy->mutable_destination(), other, 128, r.length);
      set_view(copy->mutable_source(), buffer, r.offset, r.length);
      CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 2 binding",
                   "outside the allocation");
    }
    // As binding 2 of a kernel node (kernel checks come after the range checks).
    {
      std::uint64_t kernel = 0;
      REQUIRE_OK(load_kernel(stub, s, add_f32_request(16), &kernel));
      v1::PrepareGraphRequest request;
      add_fill(request, buffer, 0, 64, 1);
      v1::KernelOp* op = request.add_nodes()->mutable_host_kernel();
      op->set_kernel(kernel);
      set_view(op->add_bindings(), buffer, 0, 64);
      set_view(op->add_bindings(), buffer, 64, 64);
      set_view(op->add_bindings(), other, r.offset, r.length);
      CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 1 binding 2",
                   "outside the allocation");
      v1::ReleaseKernelRequest release;
      release.set_kernel(kernel);
      v1::ReleaseKernelResponse released;
      REQUIRE_OK(stub.ReleaseKernel(make_context(s).get(), release, &released));
    }
    require_serving(d, stub, s);
  }
  // The exact edges are fine.
  {
    v1::PrepareGraphRequest request;
    add_fill(request, buffer, 0, kBytes, 1);
    add_fill(request, buffer, kBytes - 1, 1, 2);
    std::uint64_t graph = 0;
    REQUIRE_OK(prepare(stub, s, request, &graph));
  }
  // Copies: overlapping, unequal lengths, a lane copies cannot use.
  {
    v1::PrepareGraphRequest request;
    v1::CopyOp* copy = request.add_nodes()->mutable_copy();
    set_view(copy->mutable_destination(), buffer, 0, 128);
    set_view(copy->mutable_source(), buffer, 64, 128);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 0",
                 "nonoverlapping");
    set_view(copy->mutable_source(), other, 0, 64);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 0",
                 "destination 128 bytes, source 64 bytes");
    set_view(copy->mutable_source(), other, 0, 128);
    copy->set_lane(v1::LANE_HOST);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 0", "lane");
  }
  require_serving(d, stub, s);
}

TEST_CASE("LoadKernel refuses contracts that disagree with the kernel", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();

  // The reference request loads.
  std::uint64_t kernel = 0;
  REQUIRE_OK(load_kernel(stub, s, add_f32_request(16), &kernel));

  {
    INFO("too few bindings");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings()->RemoveLast();
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "accord.add_f32",
                 "takes 3 bindings", "declares 2");
  }
  {
    INFO("too many bindings");
    v1::LoadKernelRequest r = add_f32_request(16);
    *r.mutable_contract()->add_bindings() = r.contract().bindings(0);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "takes 3 bindings",
                 "declares 4");
  }
  {
    INFO("wrong access: the output declared read-only");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(2)->set_access(v1::ACCESS_READ);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 2", "access");
  }
  {
    INFO("wrong access: an input declared writable");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(0)->set_access(v1::ACCESS_READ_WRITE);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 0", "access");
  }
  {
    INFO("access unspecified / out of the enum");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(1)->set_access(v1::ACCESS_UNSPECIFIED);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 1", "access");
    r.mutable_contract()->mutable_bindings(1)->set_access(static_cast<v1::Access>(77));
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 1", "access");
  }
  {
    INFO("too-small bytes for count 16 (64 bytes needed)");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(1)->set_bytes(32);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 1", "32 bytes",
                 "64 bytes");
  }
  {
    INFO("zero and absurd bytes");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(2)->set_bytes(0);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 2", "bytes");
    r.mutable_contract()->mutable_bindings(2)->set_bytes(kMax);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 2", "bytes");
  }
  {
    INFO("alignment not a power of two");
    v1::LoadKernelRequest r = add_f32_request(16);
    for (const std::uint64_t alignment : {std::uint64_t{0}, std::uint64_t{6}, std::uint64_t{12}, kMax}) {
      INFO("alignment " << alignment);
      r.mutable_contract()->mutable_bindings(0)->set_alignment(alignment);
      CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 0",
                   "power of two");
    }
  }
  {
    INFO("alignment weaker than the kernel needs");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_contract()->mutable_bindings(1)->set_alignment(2);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "binding 1", "alignment 2");
  }
  {
    INFO("wrong constants size");
    v1::LoadKernelRequest r = add_f32_request(16);
    for (const std::string& constants : {std::string(), std::string(3, '\x10'), std::string(8, '\x10')}) {
      INFO("constants of " << constants.size() << " bytes");
      r.mutable_contract()->set_constants(constants);
      CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "constants",
                   std::to_string(constants.size()));
    }
  }
  {
    INFO("unknown built-in");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.set_name("accord.no_such_kernel");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::UNIMPLEMENTED, "accord.no_such_kernel");
    r.set_name("");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::UNIMPLEMENTED, "built-in kernel");
  }
  {
    INFO("plugin path that is not absolute");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.set_plugin_path("relative/plugin.so");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "relative/plugin.so",
                 "absolute");
    r.set_plugin_path("/nonexistent/accord-robustness/plugin.so");
    const grpc::Status missing = load_kernel(stub, s, r, nullptr);
    CHECK_FALSE(missing.ok());
    CHECK_THAT(missing.error_message(), Catch::Matchers::Contains("/nonexistent/accord-robustness/plugin.so"));
  }
  // The one good kernel still works after all the refusals.
  {
    std::uint64_t a = 0, b = 0, out = 0;
    REQUIRE_OK(allocate(stub, s, 64, &a));
    REQUIRE_OK(allocate(stub, s, 64, &b));
    REQUIRE_OK(allocate(stub, s, 64, &out));
    v1::PrepareGraphRequest request;
    v1::KernelOp* op = request.add_nodes()->mutable_host_kernel();
    op->set_kernel(kernel);
    set_view(op->add_bindings(), a, 0, 64);
    set_view(op->add_bindings(), b, 0, 64);
    set_view(op->add_bindings(), out, 0, 64);
    std::uint64_t graph = 0;
    REQUIRE_OK(prepare(stub, s, request, &graph));
    std::uint64_t completion = 0;
    REQUIRE_OK(submit(stub, s, graph, {}, &completion));
    v1::CompletionEvent event;
    REQUIRE_OK(wait_completion(stub, s, completion, &event));
    CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  }
  require_serving(d, stub, s);
}

TEST_CASE("kernel nodes whose views break the contract are INVALID_ARGUMENT", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  std::uint64_t kernel = 0, a = 0, b = 0, out = 0;
  REQUIRE_OK(load_kernel(stub, s, add_f32_request(16), &kernel));  // three f32[16]: 64 bytes, 4-aligned
  REQUIRE_OK(allocate(stub, s, 256, &a));
  REQUIRE_OK(allocate(stub, s, 256, &b));
  REQUIRE_OK(allocate(stub, s, 256, &out));

  struct View {
    std::uint64_t buffer, offset, length;
  };
  auto request_for = [&](const std::vector<View>& views, bool allow_aliasing) {
    v1::PrepareGraphRequest request;
    add_fill(request, a, 0, 256, 0);  // node 0: the kernel is node 1
    v1::KernelOp* op = request.add_nodes()->mutable_host_kernel();
    op->set_kernel(kernel);
    op->set_allow_aliasing(allow_aliasing);
    for (const View& v : views) set_view(op->add_bindings(), v.buffer, v.offset, v.length);
    return request;
  };

  // The reference node prepares, and runs.
  {
    std::uint64_t graph = 0;
    REQUIRE_OK(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}, {out, 0, 64}}, false), &graph));
    std::uint64_t completion = 0;
    REQUIRE_OK(submit(stub, s, graph, {}, &completion));
    v1::CompletionEvent event;
    REQUIRE_OK(wait_completion(stub, s, completion, &event));
    CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  }
  CHECK_STATUS(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 32}, {out, 0, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "binding 1", "32 bytes", "64 bytes");
  CHECK_STATUS(prepare(stub, s, request_for({{a, 2, 64}, {b, 0, 64}, {out, 0, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "binding 0", "offset 2");
  CHECK_STATUS(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}, {out, 6, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "binding 2", "offset 6");
  // The output overlaps input a: refused unless the node allows aliasing.
  CHECK_STATUS(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}, {a, 32, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "binding 0", "binding 2", "overlap");
  REQUIRE_OK(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}, {a, 32, 64}}, true), nullptr));
  // Two read-only bindings may overlap.
  REQUIRE_OK(prepare(stub, s, request_for({{a, 0, 64}, {a, 0, 64}, {out, 0, 64}}, false), nullptr));
  // Too few and too many views.
  CHECK_STATUS(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "expects 3 bindings, got 2");
  CHECK_STATUS(prepare(stub, s, request_for({{a, 0, 64}, {b, 0, 64}, {out, 0, 64}, {out, 64, 64}}, false), nullptr),
               grpc::StatusCode::INVALID_ARGUMENT, "graph node 1", "expects 3 bindings, got 4");
  CHECK_STATUS(prepare(stub, s, request_for({}, false), nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 1",
               "expects 3 bindings, got 0");
  require_serving(d, stub, s);
}

TEST_CASE("malformed graphs and submissions are INVALID_ARGUMENT", "[daemon][robustness]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 256, &buffer));

  for (const std::uint32_t value : {256u, 300u, 0xffffffffu}) {
    v1::PrepareGraphRequest request;
    add_fill(request, buffer, 0, 16, 1);
    add_fill(request, buffer, 16, 16, value);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 1",
                 "fill value " + std::to_string(value));
  }
  {
    v1::PrepareGraphRequest request;
    add_fill(request, buffer, 0, 16, 1);
    request.add_nodes();  // node 1: no op set
    add_fill(request, buffer, 16, 16, 1);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "graph node 1",
                 "no operation set");
  }
  {
    v1::PrepareGraphRequest empty;
    CHECK_STATUS(prepare(stub, s, empty, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "empty graph");
  }
  {
    // A fill whose destination view was never set: buffer 0 was never issued.
    v1::PrepareGraphRequest request;
    request.add_nodes()->mutable_fill()->set_value(1);
    CHECK_STATUS(prepare(stub, s, request, nullptr), grpc::StatusCode::NOT_FOUND, "graph node 0 binding 0",
                 "buffer handle 0");
  }

  // submit_after: at most 16 producers, checked before any of them is looked up.
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, 256, 4);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  std::vector<std::uint64_t> producers;
  for (int i = 0; i < 16; ++i) {
    // One graph per producer: each completion keeps its graph slot while its handle lives.
    std::uint64_t producer_graph = 0;
    REQUIRE_OK(prepare(stub, s, request, &producer_graph));
    std::uint64_t completion = 0;
    REQUIRE_OK(submit(stub, s, producer_graph, {}, &completion));
    producers.push_back(completion);
  }
  std::vector<std::uint64_t> seventeen = producers;
  seventeen.push_back(producers.front());
  CHECK_STATUS(submit(stub, s, graph, seventeen, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "16", "17");
  std::vector<std::uint64_t> many(1000, 1);
  CHECK_STATUS(submit(stub, s, graph, many, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "16", "1000");
  // Exactly 16 is accepted.
  std::uint64_t after_all = 0;
  REQUIRE_OK(submit(stub, s, graph, producers, &after_all));
  v1::CompletionEvent event;
  REQUIRE_OK(wait_completion(stub, s, after_all, &event));
  CHECK(event.state() == v1::COMPLETION_STATE_SUCCEEDED);
  require_serving(d, stub, s);
}

TEST_CASE("kernel_policy catalog refuses client plugin paths with PERMISSION_DENIED", "[daemon][robustness]") {
  TestDaemon d([](accord::service::DaemonConfig& config) {
    config.kernel_policy = accord::service::KernelPolicy::Catalog;
  });
  Stub& stub = d.stub();
  const Session s = d.open_session();
  for (const std::string& path : {std::string("/tmp/accord-robustness-plugin.so"), std::string("relative.so"),
                                  std::string("/usr/lib/x86_64-linux-gnu/libm.so.6")}) {
    v1::LoadKernelRequest r = add_f32_request(16);
    r.set_name("plugin_kernel");
    r.set_plugin_path(path);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::PERMISSION_DENIED, "'" + path + "'",
                 "kernel_policy = catalog");
  }
  // Built-ins still load under the catalog policy.
  std::uint64_t kernel = 0;
  REQUIRE_OK(load_kernel(stub, s, add_f32_request(16), &kernel));
  require_serving(d, stub, s);
}

}  // namespace robustness

namespace robustness {

TEST_CASE("LoadKernel loads onto the device its selector names", "[daemon][robustness][devices]") {
  TestDaemon d([](accord::service::DaemonConfig& config) { config.device_settings.backends = {"host", "null"}; });
  Stub& stub = d.stub();
  const Session s = d.open_session();
  {
    INFO("ListDevices shows the host and the null GPU with their backend and state");
    v1::ListDevicesResponse devices;
    REQUIRE_OK(stub.ListDevices(make_context(std::nullopt).get(), v1::ListDevicesRequest(), &devices));
    REQUIRE(devices.devices_size() == 2);
    CHECK(devices.devices(0).backend() == "host");
    CHECK(devices.devices(0).state() == "present");
    CHECK(devices.devices(1).index() == 1);
    CHECK(devices.devices(1).kind() == "gpu");
    CHECK(devices.devices(1).ordinal() == 0);
    CHECK(devices.devices(1).backend() == "null");
    CHECK(devices.devices(1).state() == "present");
    CHECK(devices.devices(1).reason().empty());
  }
  {
    INFO("the host named explicitly loads as an unset selector does");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_device()->set_kind("host");
    REQUIRE_OK(load_kernel(stub, s, r, nullptr));
  }
  {
    INFO("gpu:0 is the null device, which runs no code: its refusal, not the host's kernel");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_device()->set_kind("gpu");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::UNIMPLEMENTED, "null device", "gpu:0");
  }
  {
    INFO("a kind that is not host, gpu or npu");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_device()->set_kind("tpu");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "'tpu'");
    r.mutable_device()->set_kind("");
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "device kind");
  }
  {
    INFO("a negative ordinal, and a host ordinal other than 0");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_device()->set_kind("gpu");
    r.mutable_device()->set_ordinal(-1);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "gpu:-1", "negative");
    r.mutable_device()->set_kind("host");
    r.mutable_device()->set_ordinal(1);
    CHECK_STATUS(load_kernel(stub, s, r, nullptr), grpc::StatusCode::INVALID_ARGUMENT, "host:1");
  }
  {
    INFO("a GPU that is not here");
    v1::LoadKernelRequest r = add_f32_request(16);
    r.mutable_device()->set_kind("gpu");
    r.mutable_device()->set_ordinal(5);
    const grpc::Status missing = load_kernel(stub, s, r, nullptr);
    CHECK_FALSE(missing.ok());
  }
  require_serving(d, stub, s);
}

}  // namespace robustness
