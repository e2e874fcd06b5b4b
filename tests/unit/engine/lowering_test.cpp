// Prepare at the engine level: the checks a daemon must make again because it cannot
// trust the client's builder (ranges, ownership, copies, kernel contracts), and the
// grouping of consecutive same-lane operations into regions with predecessors.
#include <catch2/catch.hpp>

#include "tests/support/engine_fixture.h"

using accord::ErrorKind;
using accord::LaneKind;
using accord::testing::EngineFixture;
using Catch::Contains;
namespace engine = accord::engine;

TEST_CASE("an empty graph cannot be prepared", "[engine][lowering]") {
  EngineFixture f(1);
  auto g = f.prepare({});
  CHECK(g.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(g.status().message()), Contains("empty graph"));
}

TEST_CASE("a view outside its allocation names the node and binding", "[engine][lowering]") {
  EngineFixture f(1);
  auto a = f.buffer(128), b = f.buffer(128);
  auto op = EngineFixture::copy_on(b, a, LaneKind::Upload, 64);
  op.bindings[1].offset = 100;
  auto g = f.prepare({EngineFixture::fill(a), op});
  CHECK(g.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(g.status().message()), Contains("graph node 1 binding 1") && Contains("outside"));
}

TEST_CASE("a buffer of another session is refused", "[engine][lowering]") {
  EngineFixture f(1);
  auto other = f.engine().open_session({}, "other").value();
  auto foreign = other->allocate(64, accord::MemoryPlacement::host_visible()).value();
  auto g = f.prepare({EngineFixture::fill(foreign)});
  CHECK(g.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(g.status().message()), Contains("another runtime or session"));
}

TEST_CASE("sessions are numbered in the order they open, whatever else takes ids between",
          "[engine][lowering][tenant]") {
  EngineFixture f(1);
  const std::uint64_t first = f.session().tenant();
  auto between = f.buffer(64);  // an object id taken between two sessions
  auto second = f.engine().open_session({}, "second").value();
  auto also = second->allocate(64, accord::MemoryPlacement::host_visible()).value();
  auto third = f.engine().open_session({}, "third").value();
  CHECK(second->tenant() == first + 1);
  CHECK(third->tenant() == first + 2);
  CHECK(third->id() > second->id() + 1);  // ids are shared with the allocation between
}

TEST_CASE("copies need equal, nonoverlapping ranges", "[engine][lowering]") {
  EngineFixture f(1);
  auto a = f.buffer(256);
  auto overlapping = EngineFixture::copy_on(a, a, LaneKind::Compute, 64);
  overlapping.bindings[1].offset = 32;
  CHECK_THAT(std::string(f.prepare({overlapping}).status().message()), Contains("nonoverlapping"));
  auto unequal = EngineFixture::copy_on(a, a, LaneKind::Compute, 64);
  unequal.bindings[1].offset = 128;
  unequal.bindings[1].length = 32;
  CHECK(f.prepare({unequal}).status().kind() == ErrorKind::Invalid);
}

TEST_CASE("kernel bindings are checked against the contract, and its access wins",
          "[engine][lowering][contract]") {
  EngineFixture f(1);
  accord::KernelContract contract;
  contract.bindings.push_back({64, 16, accord::Access::ReadWrite, "state"});
  auto kernel = f.session().load_kernel({accord::devices::CodeImage::Kind::Builtin, "k", ""}, contract).value();
  auto a = f.buffer(256), b = f.buffer(256);
  engine::OperationSpec op;
  op.kind = accord::devices::OpKind::Kernel;
  op.kernel = kernel;
  op.bindings.push_back({a, 8, 64});
  CHECK_THAT(std::string(f.prepare({op}).status().message()),
             Contains("graph node 0") && Contains("kernel 'k'") && Contains("aligned"));
  op.bindings[0].offset = 16;
  op.bindings[0].length = 32;
  CHECK_THAT(std::string(f.prepare({op}).status().message()), Contains("shorter"));
  op.bindings[0].length = 64;
  // The contract says ReadWrite: a later reader of those bytes must follow the kernel.
  auto g = f.prepare({op, EngineFixture::copy_on(b, a, LaneKind::Upload, 32)});
  REQUIRE(g.ok());
  CHECK(g.value()->dependencies().of(1).size() == 1);
}

TEST_CASE("consecutive same-lane operations become one region", "[engine][lowering]") {
  EngineFixture f(1);
  auto a = f.buffer(), b = f.buffer(), c = f.buffer(), d = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::fill(b),
                      EngineFixture::copy_on(c, a, LaneKind::Upload),
                      EngineFixture::copy_on(d, b, LaneKind::Upload), EngineFixture::fill(c)})
               .value();
  REQUIRE(g->regions().size() == 3);
  CHECK(g->regions()[0].ops == std::vector<std::uint32_t>{0, 1});
  CHECK(g->regions()[0].lane == LaneKind::Compute);
  CHECK(g->regions()[1].ops == std::vector<std::uint32_t>{2, 3});
  CHECK(g->regions()[1].lane == LaneKind::Upload);
  CHECK(g->regions()[1].predecessors == std::vector<std::uint32_t>{0});
  CHECK(g->regions()[2].predecessors == std::vector<std::uint32_t>{1});
  CHECK(g->regions()[1].copy_bytes == 128);
  // Two regions hold fills (native task lists); the copy-only region does not count.
  CHECK(f.session().statistics().native_graphs_prepared == 2);
}

TEST_CASE("a graph retains what it binds and releases it when dropped", "[engine][lowering][retention]") {
  EngineFixture f(1);
  {
    engine::Ref<engine::PreparedGraph> g;
    {
      auto a = f.buffer(512);
      g = f.prepare({EngineFixture::fill(a)}).value();
    }
    CHECK(f.session().statistics().live_bytes == 512);
  }
  CHECK(f.session().statistics().live_bytes == 0);
}
