// accordctl's graph files (client/tools/accordctl/graph_file.cpp): a valid file becomes
// the right Allocate, LoadKernel and PrepareGraph requests; each kind of mistake is an
// Invalid naming the node and field. Contract checks against views are the daemon's and
// are not tested here.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "accord/builtin_kernels.h"
#include "client/tools/accordctl/graph_file.h"

using namespace accord;
using Catch::Contains;

namespace {

// The example of graph_file.h plus a relu, a whole-buffer view and an automatic lane.
constexpr const char* kValid = R"({
  "buffers": {"x": 1024, "y": 1024, "z": 256},
  "nodes": [
    {"fill": {"dst": "x[0:64]", "value": 1}},
    {"copy": {"dst": "y[0:64]", "src": "x[0:64]", "lane": "upload"}},
    {"kernel": {"name": "accord.add_f32", "count": 16, "bindings": ["x[0:64]", "y[0:64]", "z[0:64]"]}},
    {"copy": {"dst": "y[64:320]", "src": "z"}},
    {"kernel": {"name": "accord.add_f32", "count": 16, "bindings": ["y[0:64]", "y[64:128]", "z[64:128]"]}},
    {"kernel": {"name": "accord.relu_f32", "count": 4, "bindings": ["z[0:16]", "z"], "allow_aliasing": true}}
  ]})";

// Parses `text`, which must fail, and returns its message.
std::string error_of(const std::string& text) {
  auto parsed = ctl::parse_graph_description(text);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().kind() == ErrorKind::Invalid);
  return std::string(parsed.status().message());
}

// A one-node graph over buffers x (1024 bytes) and y (64 bytes).
std::string one_node(const std::string& node) {
  return R"({"buffers": {"x": 1024, "y": 64}, "nodes": [{"fill": {"dst": "x", "value": 0}}, )" + node + "]}";
}

}  // namespace

TEST_CASE("a valid graph file becomes the allocate, load and prepare requests", "[accordctl][graph_file]") {
  auto parsed = ctl::parse_graph_description(kValid);
  REQUIRE(parsed.ok());
  const ctl::GraphDescription& graph = parsed.value();

  // Buffers in file order, HostVisible.
  REQUIRE(graph.buffers.size() == 3);
  CHECK(graph.buffers[0].name == "x");
  CHECK(graph.buffers[2].name == "z");
  const v1::AllocateRequest allocate = ctl::allocate_request(graph.buffers[2]);
  CHECK(allocate.bytes() == 256);
  CHECK(allocate.placement().kind() == v1::PLACEMENT_KIND_HOST_VISIBLE);

  // Two add_f32 nodes with the same count share one kernel; relu is another.
  REQUIRE(graph.kernels.size() == 2);
  const v1::LoadKernelRequest load = ctl::load_kernel_request(graph.kernels[0]);
  CHECK(load.name() == "accord.add_f32");
  CHECK(load.plugin_path().empty());
  REQUIRE(load.contract().bindings_size() == 3);
  CHECK(load.contract().bindings(0).access() == v1::ACCESS_READ);
  CHECK(load.contract().bindings(2).access() == v1::ACCESS_WRITE);
  CHECK(load.contract().bindings(2).bytes() == 64);
  CHECK(load.contract().bindings(2).alignment() == 4);
  std::uint32_t count = 0;
  REQUIRE(load.contract().constants().size() == sizeof(count));
  std::memcpy(&count, load.contract().constants().data(), sizeof(count));
  CHECK(count == 16);

  const std::vector<std::uint64_t> buffers = {101, 102, 103};
  const std::vector<std::uint64_t> kernels = {7, 8};
  const v1::PrepareGraphRequest request = ctl::prepare_request(graph, buffers, kernels);
  REQUIRE(request.nodes_size() == 6);

  const v1::FillOp& fill = request.nodes(0).fill();
  CHECK(fill.destination().buffer() == 101);
  CHECK(fill.destination().offset() == 0);
  CHECK(fill.destination().length() == 64);
  CHECK(fill.value() == 1);

  const v1::CopyOp& copy = request.nodes(1).copy();
  CHECK(copy.destination().buffer() == 102);
  CHECK(copy.source().buffer() == 101);
  CHECK(copy.lane() == v1::LANE_UPLOAD);

  const v1::KernelOp& add = request.nodes(2).host_kernel();
  CHECK(add.kernel() == 7);
  REQUIRE(add.bindings_size() == 3);
  CHECK(add.bindings(2).buffer() == 103);
  CHECK(add.bindings(2).length() == 64);
  CHECK_FALSE(add.allow_aliasing());

  // A bare name is the whole buffer; no lane lets the daemon choose.
  const v1::CopyOp& whole = request.nodes(3).copy();
  CHECK(whole.destination().offset() == 64);
  CHECK(whole.destination().length() == 256);
  CHECK(whole.source().offset() == 0);
  CHECK(whole.source().length() == 256);
  CHECK(whole.lane() == v1::LANE_UNSPECIFIED);

  CHECK(request.nodes(4).host_kernel().kernel() == 7);
  const v1::KernelOp& relu = request.nodes(5).host_kernel();
  CHECK(relu.kernel() == 8);
  CHECK(relu.allow_aliasing());
}

TEST_CASE("nodes are described as they were written", "[accordctl][graph_file]") {
  auto parsed = ctl::parse_graph_description(kValid);
  REQUIRE(parsed.ok());
  CHECK(ctl::describe_node(*parsed, 0) == "fill x[0:64] = 1");
  CHECK(ctl::describe_node(*parsed, 1) == "copy y[0:64] <- x[0:64]");
  CHECK(ctl::describe_node(*parsed, 2) == "accord.add_f32(x[0:64], y[0:64], z[0:64])");
  CHECK(ctl::describe_node(*parsed, 3) == "copy y[64:320] <- z");
}

TEST_CASE("saxpy and matmul take their own parameters", "[accordctl][graph_file]") {
  auto parsed = ctl::parse_graph_description(R"({
    "buffers": {"a": 24, "b": 48, "c": 32, "v": 64},
    "nodes": [
      {"kernel": {"name": "accord.matmul_f32", "m": 2, "k": 3, "n": 4, "bindings": ["a", "b", "c"]}},
      {"kernel": {"name": "accord.saxpy_f32", "count": 8, "a": 0.5, "bindings": ["c", "v[0:32]"]}}
    ]})");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->kernels.size() == 2);
  const builtin::KernelSpec matmul = builtin::matmul_f32(2, 3, 4);
  CHECK(parsed->kernels[0].name == matmul.name);
  CHECK(parsed->kernels[0].contract.constants == matmul.contract.constants);
  CHECK(parsed->kernels[0].contract.bindings[2].bytes == 32);
  const builtin::KernelSpec saxpy = builtin::saxpy_f32(8, 0.5f);
  CHECK(parsed->kernels[1].contract.constants == saxpy.contract.constants);
  CHECK(parsed->kernels[1].contract.bindings[1].access == Access::ReadWrite);
}

TEST_CASE("bad view syntax names the node and field", "[accordctl][graph_file]") {
  for (const char* view : {"x[0;64]", "x[0:64", "x[:64]", "x[0:]", "x[-1:4]", "x[0:64]z", "[0:64]", "x[a:b]", "1x"}) {
    INFO(view);
    const std::string message = error_of(one_node(R"({"fill": {"dst": ")" + std::string(view) + R"(", "value": 1}})"));
    CHECK_THAT(message, Contains("node 1, field \"fill.dst\"") && Contains("bad view"));
  }
  CHECK_THAT(error_of(one_node(R"({"fill": {"dst": 5, "value": 1}})")),
             Contains("node 1, field \"fill.dst\"") && Contains("must be a string"));
}

TEST_CASE("an unknown buffer name lists the declared ones", "[accordctl][graph_file]") {
  CHECK(error_of(one_node(R"({"copy": {"dst": "x[0:8]", "src": "q[0:8]"}})")) ==
        "node 1, field \"copy.src\": unknown buffer 'q' (declared: x, y)");
}

TEST_CASE("views outside their buffer or empty are refused", "[accordctl][graph_file]") {
  CHECK(error_of(one_node(R"({"kernel": {"name": "accord.relu_f32", "count": 16, "bindings": ["x[0:64]", "y[0:128]"]}})")) ==
        "node 1, field \"kernel.bindings[1]\": view 'y[0:128]' ends at byte 128, past the end of buffer 'y' (64 bytes)");
  CHECK_THAT(error_of(one_node(R"({"fill": {"dst": "x[8:8]", "value": 1}})")),
             Contains("node 1, field \"fill.dst\"") && Contains("empty"));
  CHECK_THAT(error_of(one_node(R"({"fill": {"dst": "x[9:8]", "value": 1}})")), Contains("empty or reversed"));
  CHECK_THAT(error_of(one_node(R"({"copy": {"dst": "x[0:8]", "src": "y[0:16]"}})")),
             Contains("node 1, field \"copy.src\"") && Contains("length 16 differs from dst length 8"));
}

TEST_CASE("an unknown kernel or lane names the node and field", "[accordctl][graph_file]") {
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.gelu_f32", "count": 1, "bindings": []}})")),
             Contains("node 1, field \"kernel.name\": unknown kernel 'accord.gelu_f32'") &&
                 Contains("accord.matmul_f32"));
  CHECK(error_of(one_node(R"({"copy": {"dst": "x[0:8]", "src": "y[0:8]", "lane": "host"}})")) ==
        "node 1, field \"copy.lane\": unknown lane \"host\" (expected upload, compute or download)");
  CHECK_THAT(error_of(one_node(R"({"copy": {"dst": "x[0:8]", "src": "y[0:8]", "lane": 1}})")),
             Contains("node 1, field \"copy.lane\": unknown lane 1"));
}

TEST_CASE("kernel parameters and bindings are checked per built-in", "[accordctl][graph_file]") {
  CHECK(error_of(one_node(R"({"kernel": {"name": "accord.add_f32", "bindings": ["x", "x", "x"]}})")) ==
        "node 1, field \"kernel.count\": missing");
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.add_f32", "count": 0, "bindings": ["x", "x", "x"]}})")),
             Contains("node 1, field \"kernel.count\": must be an integer from 1 to 4294967295, got 0"));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.add_f32", "count": 4294967296, "bindings": []}})")),
             Contains("field \"kernel.count\""));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.add_f32", "count": 4, "bindings": ["x", "y"]}})")),
             Contains("node 1, field \"kernel.bindings\": accord.add_f32 takes an array of 3 views (a, b, out)"));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.saxpy_f32", "count": 4, "bindings": ["x", "y"]}})")),
             Contains("node 1, field \"kernel.a\": missing"));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.matmul_f32", "m": 1, "k": 1, "bindings": []}})")),
             Contains("node 1, field \"kernel.n\": missing"));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.relu_f32", "count": 4, "a": 2, "bindings": []}})")),
             Contains("node 1, field \"kernel.a\": unknown field"));
  CHECK_THAT(error_of(one_node(R"({"kernel": {"name": "accord.relu_f32", "count": 4, "bindings": ["x", "y"],
                                              "allow_aliasing": "yes"}})")),
             Contains("node 1, field \"kernel.allow_aliasing\": must be true or false"));
}

TEST_CASE("misspelt fields and malformed nodes are errors, never ignored", "[accordctl][graph_file]") {
  CHECK(error_of(one_node(R"({"copy": {"dest": "x[0:8]", "src": "y[0:8]"}})")) ==
        "node 1, field \"copy.dest\": unknown field (expected dst, src, lane)");
  CHECK_THAT(error_of(one_node(R"({"fill": {"dst": "x", "value": 256}})")),
             Contains("node 1, field \"fill.value\": must be an integer from 0 to 255, got 256"));
  CHECK_THAT(error_of(one_node(R"({"fill": {"dst": "x", "value": 1}, "copy": {}})")),
             Contains("node 1: expected an object with exactly one of"));
  CHECK_THAT(error_of(one_node(R"({"move": {}})")), Contains("node 1: unknown operation \"move\""));
  CHECK_THAT(error_of(one_node(R"({"fill": [1]})")), Contains("node 1, field \"fill\": must be an object"));
}

TEST_CASE("the top level needs buffers and nodes", "[accordctl][graph_file]") {
  CHECK_THAT(error_of("{\"buffers\": {\"x\": 8},"), Contains("not valid JSON") && Contains("line 1"));
  CHECK_THAT(error_of("[]"), Contains("must hold a JSON object"));
  CHECK(error_of(R"({"nodes": [{"fill": {"dst": "x", "value": 0}}]})") == "field \"buffers\": missing");
  CHECK_THAT(error_of(R"({"buffers": {"x": 8}, "nodes": []})"), Contains("field \"nodes\": must be a non-empty array"));
  CHECK(error_of(R"({"buffers": {"x": 0}, "nodes": [{"fill": {"dst": "x", "value": 0}}]})") ==
        "field \"buffers.x\": size must be an integer >= 1 (bytes), got 0");
  CHECK_THAT(error_of(R"({"buffers": {"x[1]": 8}, "nodes": [{"fill": {"dst": "x", "value": 0}}]})"),
             Contains("field \"buffers.x[1]\": a buffer name is"));
  CHECK(error_of(R"({"buffers": {"x": 8}, "nodes": [{"fill": {"dst": "x", "value": 0}}], "edges": []})") ==
        "field \"edges\": unknown field (expected buffers, nodes)");
}
