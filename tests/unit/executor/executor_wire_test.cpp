// The executor channel's encodings on their own: the bounds-checked reader, the control
// records (inline and in a memfd), the decoders refusing garbage, and the channel memfd
// refusing a bad header. What an executor sends must never crash accordd.
#include <sys/socket.h>

#include "daemon/executor/byte_codec.h"
#include "daemon/executor/executor_channel.h"
#include "daemon/executor/executor_control.h"
#include "daemon/executor/executor_messages.h"
#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {

using Catch::Contains;

TEST_CASE("the byte reader refuses truncated fields and huge counts", "[executor][wire]") {
  executor::ByteWriter w;
  w.put(std::uint32_t{7});
  w.put_string("hello");
  const std::vector<std::byte> bytes = w.take();
  executor::ByteReader good(bytes, "test");
  CHECK(good.get<std::uint32_t>() == 7);
  CHECK(good.get_string() == "hello");
  CHECK(good.finish().ok());

  executor::ByteReader shortened(std::span<const std::byte>(bytes).first(6), "test");
  CHECK(shortened.get<std::uint32_t>() == 7);
  CHECK(shortened.get_string().empty());
  CHECK_THAT(std::string(shortened.finish().message()), Contains("truncated"));

  executor::ByteWriter counted;
  counted.put(std::uint32_t{0xffffffff});
  const std::vector<std::byte> huge = counted.take();
  executor::ByteReader r(huge, "test");
  CHECK(r.get_count(8) == 0);
  CHECK_FALSE(r.ok());
}

TEST_CASE("decoders refuse garbage, and every message round-trips", "[executor][wire]") {
  std::vector<std::byte> junk(37, std::byte{0xee});
  CHECK_FALSE(executor::decode_hello(junk, "gpu:0 executor").ok());
  CHECK_FALSE(executor::decode_lower(junk).ok());
  CHECK_FALSE(executor::decode_load(junk).ok());
  CHECK_FALSE(executor::decode_object(junk, "x").ok());
  CHECK_FALSE(executor::decode_release(junk).ok());

  executor::HelloInfo hello;
  hello.pid = 42;
  hello.has_device = true;
  hello.info.kind = DeviceKind::Gpu;
  hello.info.ordinal = 3;
  hello.info.name = "cuda:3";
  hello.lanes = {LaneKind::Upload, LaneKind::Compute};
  hello.placements = {MemoryPlacement::gpu_local(3)};
  hello.waits_natively = true;
  auto back = executor::decode_hello(executor::encode(hello), "x");
  REQUIRE(back.ok());
  CHECK(back->pid == 42);
  CHECK(back->info.id() == DeviceId{DeviceKind::Gpu, 3});
  CHECK(back->lanes.size() == 2);
  CHECK(back->placements[0] == MemoryPlacement::gpu_local(3));
  CHECK(back->waits_natively);

  executor::WireRegion region;
  region.slots = 4;
  region.priority = -2;
  region.tenant = 0x1234'5678'9abcULL;
  executor::WireOperation op;
  op.kind = devices::OpKind::Copy;
  op.bindings.push_back({executor::BindingRef::Admission, 9, 0x1000, 16, 64, Access::Write});
  region.operations = {op, op};
  region.edges = {{0, 1}};
  auto lowered = executor::decode_lower(executor::encode(region));
  REQUIRE(lowered.ok());
  CHECK(lowered->slots == 4);
  CHECK(lowered->priority == -2);
  CHECK(lowered->tenant == 0x1234'5678'9abcULL);
  CHECK(lowered->operations[1].bindings[0].id == 9);
  CHECK(lowered->edges[0].after == 1);

  region.edges = {{0, 5}};  // an edge past the operations
  CHECK_FALSE(executor::decode_lower(executor::encode(region)).ok());

  // Admissions say what their fd is: pages to map, or another GPU's exported memory.
  for (const executor::AdmitKind kind : {executor::AdmitKind::HostPages, executor::AdmitKind::GpuMemory}) {
    executor::AdmitRequest admit{4096, hello.info, kind};
    const auto admitted = executor::decode_admit(executor::encode(admit));
    REQUIRE(admitted.ok());
    CHECK(admitted->bytes == 4096);
    CHECK(admitted->home.id() == DeviceId{DeviceKind::Gpu, 3});
    CHECK(admitted->kind == kind);
  }
  std::vector<std::byte> unknown_kind = executor::encode(executor::AdmitRequest{4096, hello.info});
  unknown_kind.back() = std::byte{2};
  const auto refused = executor::decode_admit(unknown_kind);
  REQUIRE_FALSE(refused.ok());
  CHECK(std::string(refused.status().message()).find("unknown kind 2") != std::string::npos);
  CHECK_FALSE(executor::decode_admit(junk).ok());
}

TEST_CASE("control records carry a descriptor, and large payloads travel in a sealed memfd", "[executor][wire]") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
  UniqueFd a(pair[0]);
  UniqueFd b(pair[1]);
  const std::vector<std::byte> small(10, std::byte{1});
  REQUIRE(executor::send_control(a.get(), executor::ControlOp::Admit, 5, 0, small, a.get()).ok());
  auto got = executor::receive_control(b.get());
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((*got)->op == executor::ControlOp::Admit);
  CHECK((*got)->request_id == 5);
  CHECK((*got)->payload == small);
  CHECK((*got)->fd.valid());

  const std::vector<std::byte> big(200 * 1024, std::byte{2});
  REQUIRE(executor::send_control(a.get(), executor::ControlOp::Load, 6, 0, big).ok());
  got = executor::receive_control(b.get());
  REQUIRE(got.ok());
  CHECK((*got)->payload == big);
  CHECK_FALSE((*got)->fd.valid());

  const char junk[] = "no header here";
  REQUIRE(::send(a.get(), junk, 5, 0) == 5);
  got = executor::receive_control(b.get());
  CHECK_FALSE(got.ok());
  a.reset();
  got = executor::receive_control(b.get());
  REQUIRE(got.ok());
  CHECK_FALSE(got->has_value());  // hung up
}

TEST_CASE("the executor refuses a channel memfd whose header does not fit the file", "[executor][wire]") {
  auto made = executor::ExecutorChannel::create(8, 8);
  REQUIRE(made.ok());
  CHECK(made->commands().capacity == 8);
  UniqueFd copy(::dup(made->fd()));
  auto mapped = executor::ExecutorChannel::map(std::move(copy));
  REQUIRE(mapped.ok());
  CHECK(mapped->completions().capacity == 8);

  made->header().completion_offset = 3;  // not aligned, and then the file is not a channel
  UniqueFd again(::dup(made->fd()));
  auto refused = executor::ExecutorChannel::map(std::move(again));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Contains("bad header"));
}

}  // namespace accord::testing
