// The emulator's graph extension through the real loader: programs compute what the CPU
// reference computes on random inputs, argument properties describe the program, bad
// blobs are refused with a build log, and the stall hook never completes until the
// queue is destroyed.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "tests/unit/devices/npu_emulator/npu_emulator_test_support.h"
#include "tests/unit/devices/npu_emulator/npu_reference.h"

namespace accord::npu_testing {

TEST_CASE("matmul, add, relu, softmax and copy programs match the CPU reference", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  for (const ProgramCase& c : program_cases()) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO(c.name << ", seed " << seed);
      ze_graph_handle_t graph = nullptr;
      std::string log;
      REQUIRE(s.create_graph(c.text, graph, log) == ZE_RESULT_SUCCESS);
      auto args = random_arguments(c, seed);
      auto expected = args;
      c.reference(expected);
      s.run(graph, args);
      for (std::size_t i = 0; i < args.size(); ++i) {
        REQUIRE(args[i].size() == expected[i].size());
        for (std::size_t j = 0; j < args[i].size(); ++j) CHECK(args[i][j] == Approx(expected[i][j]).epsilon(1e-5));
      }
      REQUIRE(s.graph->pfnDestroy(graph) == ZE_RESULT_SUCCESS);
    }
  }
}

TEST_CASE("argument properties give name, direction, dims and f32", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  ze_graph_handle_t graph = nullptr;
  std::string log;
  REQUIRE(s.create_graph(program_cases()[0].text, graph, log) == ZE_RESULT_SUCCESS);
  ze_graph_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES;
  REQUIRE(s.graph->pfnGetProperties(graph, &p) == ZE_RESULT_SUCCESS);
  REQUIRE(p.numGraphArgs == 3);
  const struct {
    const char* name;
    ze_graph_argument_type_t type;
    std::uint32_t d0, d1;
  } expected[] = {{"a", ZE_GRAPH_ARGUMENT_TYPE_INPUT, 5, 7},
                  {"b", ZE_GRAPH_ARGUMENT_TYPE_INPUT, 7, 3},
                  {"c", ZE_GRAPH_ARGUMENT_TYPE_OUTPUT, 5, 3}};
  for (std::uint32_t i = 0; i < 3; ++i) {
    ze_graph_argument_properties_t a{};
    a.stype = ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
    REQUIRE(s.graph->pfnGetArgumentProperties(graph, i, &a) == ZE_RESULT_SUCCESS);
    CHECK(std::string(a.name) == expected[i].name);
    CHECK(a.type == expected[i].type);
    CHECK(a.dims[0] == expected[i].d0);
    CHECK(a.dims[1] == expected[i].d1);
    CHECK(a.dims[2] == 1);
    CHECK(a.devicePrecision == ZE_GRAPH_ARGUMENT_PRECISION_FP32);
  }
  ze_graph_argument_properties_t a{};
  CHECK(s.graph->pfnGetArgumentProperties(graph, 3, &a) == ZE_RESULT_ERROR_INVALID_ARGUMENT);
  CHECK(s.graph->pfnSetArgumentValue(graph, 3, &a) == ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // An execute with unbound arguments is refused when it is appended, not run.
  ze_command_list_handle_t list = s.make_list();
  CHECK(s.graph->pfnAppendGraphExecute(list, graph, nullptr, nullptr, 0, nullptr) == ZE_RESULT_ERROR_INVALID_ARGUMENT);
  REQUIRE(zeCommandListDestroy(list) == ZE_RESULT_SUCCESS);
  REQUIRE(s.graph->pfnDestroy(graph) == ZE_RESULT_SUCCESS);
}

TEST_CASE("a bad blob is refused at create, with the reason in the build log", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  ze_graph_handle_t graph = nullptr;
  std::string log;
  CHECK(s.create_graph("accord-npu-program 1\ninput a f32 2 3\ninput b f32 4 2\noutput c f32 2 2\nmatmul c a b\n",
                       graph, log) == ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  CHECK(graph == nullptr);
  CHECK_THAT(log, Catch::Contains("line 5: matmul shapes do not match"));
  CHECK(s.create_graph("\x7f\x45LF binary", graph, log) == ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  CHECK_THAT(log, Catch::Contains("not printable ASCII"));
  // A later successful create leaves the last refusal's log in place only for null.
  REQUIRE(s.create_graph(program_cases()[2].text, graph, log) == ZE_RESULT_SUCCESS);
  std::uint32_t size = 0;
  REQUIRE(s.graph->pfnBuildLogGetString(graph, &size, nullptr) == ZE_RESULT_SUCCESS);
  CHECK(size == 1);
  REQUIRE(s.graph->pfnDestroy(graph) == ZE_RESULT_SUCCESS);
}

TEST_CASE("the stall hook never completes, and destroying the queue still returns", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  ze_graph_handle_t graph = nullptr;
  std::string log;
  REQUIRE(s.create_graph(stall_program(), graph, log) == ZE_RESULT_SUCCESS);
  std::vector<float> x{1, 2, 3, 4}, y(4, 0);
  REQUIRE(s.graph->pfnSetArgumentValue(graph, 0, x.data()) == ZE_RESULT_SUCCESS);
  REQUIRE(s.graph->pfnSetArgumentValue(graph, 1, y.data()) == ZE_RESULT_SUCCESS);
  ze_command_queue_handle_t queue = s.make_queue();
  ze_command_list_handle_t list = s.make_list();
  ze_fence_handle_t fence = s.make_fence(queue);
  REQUIRE(s.graph->pfnAppendGraphExecute(list, graph, nullptr, nullptr, 0, nullptr) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListClose(list) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence) == ZE_RESULT_SUCCESS);
  CHECK(zeFenceHostSynchronize(fence, 100'000'000) == ZE_RESULT_NOT_READY);
  CHECK(zeCommandQueueSynchronize(queue, 10'000'000) == ZE_RESULT_NOT_READY);
  CHECK(y == x);  // the copy before the stall ran
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(zeCommandQueueDestroy(queue) == ZE_RESULT_SUCCESS);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(zeFenceQueryStatus(fence) == ZE_RESULT_NOT_READY);  // abandoned, never signalled
  REQUIRE(zeFenceDestroy(fence) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListDestroy(list) == ZE_RESULT_SUCCESS);
  REQUIRE(s.graph->pfnDestroy(graph) == ZE_RESULT_SUCCESS);
}

}  // namespace accord::npu_testing
