// How accordctl words protocol values and failed calls (proto_text.cpp, rpc_errors.cpp):
// lane and placement names, the counters in proto order, a client KernelContract as
// the proto message, and the stderr line for each kind of gRPC failure.
#include <catch2/catch.hpp>

#include <cstring>

#include "accord/builtin_kernels.h"
#include "client/tools/accordctl/proto_text.h"
#include "client/tools/accordctl/rpc_errors.h"

using namespace accord;

TEST_CASE("lanes and placements have operator-facing names", "[accordctl][proto]") {
  CHECK(ctl::lane_name(v1::LANE_UPLOAD) == "upload");
  CHECK(ctl::lane_name(v1::LANE_HOST) == "host");
  CHECK(ctl::lane_name(v1::LANE_UNSPECIFIED) == "auto");
  CHECK(ctl::lane_name(static_cast<v1::Lane>(42)) == "lane 42");
  CHECK(ctl::copy_lane_from_name("download") == v1::LANE_DOWNLOAD);
  CHECK_FALSE(ctl::copy_lane_from_name("host").has_value());  // copies name GPU lanes only
  CHECK(ctl::placement_name(v1::PLACEMENT_KIND_HOST_VISIBLE) == "host-visible");
  CHECK(ctl::placement_name(v1::PLACEMENT_KIND_SHARED) == "shared");
  CHECK(ctl::completion_state_name(v1::COMPLETION_STATE_FAILED) == "failed");
}

TEST_CASE("statistics list the 13 counters and devices_lost in proto order", "[accordctl][proto]") {
  v1::Statistics s;
  s.set_native_graphs_prepared(1);
  s.set_live_bytes(4096);
  s.set_peak_bytes(8192);
  s.set_devices_lost(2);
  const auto counters = ctl::statistics_counters(s);
  REQUIRE(counters.size() == 14);
  CHECK(counters.front() == std::pair<std::string, std::uint64_t>{"native_graphs_prepared", 1});
  CHECK(counters[11] == std::pair<std::string, std::uint64_t>{"live_bytes", 4096});
  CHECK(counters[12] == std::pair<std::string, std::uint64_t>{"peak_bytes", 8192});
  CHECK(counters.back() == std::pair<std::string, std::uint64_t>{"devices_lost", 2});
  // Same count and names as the message declares, so a new field is not silently left out.
  const auto* descriptor = v1::Statistics::descriptor();
  REQUIRE(descriptor->field_count() == static_cast<int>(counters.size()));
  for (int i = 0; i < descriptor->field_count(); ++i)
    CHECK(counters[static_cast<std::size_t>(i)].first == descriptor->field(i)->name());
}

TEST_CASE("a built-in's contract converts to the proto message field by field", "[accordctl][proto]") {
  const builtin::KernelSpec spec = builtin::saxpy_f32(16, 2.0f);
  const v1::KernelContract proto = ctl::to_proto(spec.contract);
  REQUIRE(proto.bindings_size() == 2);
  CHECK(proto.bindings(0).bytes() == 64);
  CHECK(proto.bindings(0).alignment() == 4);
  CHECK(proto.bindings(0).access() == v1::ACCESS_READ);
  CHECK(proto.bindings(1).access() == v1::ACCESS_READ_WRITE);
  CHECK(proto.bindings(1).layout() == "y f32[16]");
  REQUIRE(proto.constants().size() == 8);
  CHECK(std::memcmp(proto.constants().data(), spec.contract.constants.data(), 8) == 0);
}

TEST_CASE("a failed call prints as its code name and the daemon's message", "[accordctl][errors]") {
  const grpc::Status invalid(grpc::StatusCode::INVALID_ARGUMENT, "graph node 3 binding 1: view too short");
  CHECK(ctl::describe_rpc_failure(invalid, "/run/accord/accord.sock") ==
        "INVALID_ARGUMENT: graph node 3 binding 1: view too short");
  const grpc::Status busy(grpc::StatusCode::RESOURCE_EXHAUSTED, "memory budget exceeded");
  CHECK(ctl::describe_rpc_failure(busy, "/s", "buffer 'x'") == "RESOURCE_EXHAUSTED: buffer 'x': memory budget exceeded");
  CHECK(ctl::status_code_name(grpc::StatusCode::DATA_LOSS) == "DATA_LOSS");
  CHECK(ctl::status_code_name(grpc::StatusCode::UNAUTHENTICATED) == "UNAUTHENTICATED");
  CHECK(ctl::status_code_name(static_cast<grpc::StatusCode>(20)) == "CODE_20");
}

TEST_CASE("an unreachable daemon is reported by socket path", "[accordctl][errors]") {
  const grpc::Status down(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses");
  CHECK(ctl::describe_rpc_failure(down, "/run/accord/accord.sock", "ignored") ==
        "cannot reach accordd at /run/accord/accord.sock: failed to connect to all addresses");
  const grpc::Status slow(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
  CHECK_THAT(ctl::describe_rpc_failure(slow, "/tmp/a.sock"),
             Catch::StartsWith("DEADLINE_EXCEEDED: Deadline Exceeded") && Catch::Contains("/tmp/a.sock") &&
                 Catch::Contains("--timeout"));
}
