// The ring's optional answers (ring_layout.h, "Features"; minor version 2), written as raw
// entries: a client that asks for combined answers gets one answer for a submission that
// had ended when accordd accepted it (the poller ran it itself), one that asks for quiet
// acknowledgements gets no answer for a release that succeeded (but still one for a bad
// release), and a client that asks for nothing gets the answers of version 1.1. Beside
// it: RingInlinePolicy, which decides which graphs a poller runs itself.
#include <catch2/catch.hpp>

#include <cstdint>

#include "daemon/service/ring_inline_policy.h"
#include "tests/robustness/raw_ring.h"
#include "tests/robustness/robustness_fixture.h"

namespace robustness {
namespace {

wire::SubmitEntry release_completion_entry(std::uint64_t tag, std::uint64_t completion) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::ReleaseCompletion);
  entry.tag = tag;
  entry.handle = completion;
  return entry;
}

std::uint64_t fill_graph(Stub& stub, const Session& s, std::uint64_t buffer, std::uint64_t bytes = 64) {
  v1::PrepareGraphRequest request;
  add_fill(request, buffer, 0, bytes, 0x5a);
  std::uint64_t graph = 0;
  REQUIRE_OK(prepare(stub, s, request, &graph));
  return graph;
}

struct Answers {
  int combined = 0;  // submissions answered once (terminal 2)
  int split = 0;     // submissions answered twice (terminal 0, then 1)
};

// Submits `graph` `count` times on `ring`, releasing each completion after its end, and
// checks the shape of every answer: one with terminal 2, or terminal 0 then 1; and, with
// quiet acknowledgements, nothing for the releases.
Answers submit_many(RawRing& ring, std::uint64_t graph, int count, bool quiet) {
  Answers seen;
  std::uint64_t tag = 1000;
  for (int i = 0; i < count; ++i) {
    ring.push(submit_entry(++tag, graph));
    const RawRing::Answer first = ring.expect(tag);
    REQUIRE(first.entry.status == 0);
    REQUIRE(first.entry.handle != 0);
    if (first.entry.terminal == 2) {
      ++seen.combined;
    } else {
      REQUIRE(first.entry.terminal == 0);
      const RawRing::Answer done = ring.expect(tag);
      REQUIRE(done.entry.terminal == 1);
      REQUIRE(done.entry.status == 0);
      REQUIRE(done.entry.handle == first.entry.handle);
      ++seen.split;
    }
    ring.push(release_completion_entry(++tag, first.entry.handle));
    if (!quiet) REQUIRE(ring.expect(tag).entry.status == 0);
  }
  return seen;
}

}  // namespace

TEST_CASE("a client that asks for combined answers gets one answer for a submission that had ended",
          "[daemon][robustness][ring]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  RawRing ring(s, wire::kRingFeatureCombinedAnswers | wire::kRingFeatureQuietAcks);
  // A 64-byte fill is well under RingInlinePolicy::kMaxInlineUs once measured, so after
  // its first run (on an engine worker) it runs on the poller and has ended when the
  // poller answers: combined answers. Several graphs: a loaded machine can make any single
  // run look long. A 32 MiB fill takes milliseconds, is never run on the poller, and is
  // still running when the poller answers its acceptance: split answers (a worker
  // cannot end it in the microseconds the poller takes to answer).
  Answers seen;
  for (int g = 0; g < 3; ++g) {
    std::uint64_t buffer = 0;
    REQUIRE_OK(allocate(stub, s, 64, &buffer));
    seen.combined += submit_many(ring, fill_graph(stub, s, buffer), 10, /*quiet=*/true).combined;
  }
  std::uint64_t large = 0;
  constexpr std::uint64_t kLargeBytes = 32ull << 20;
  REQUIRE_OK(allocate(stub, s, kLargeBytes, &large));
  seen.split += submit_many(ring, fill_graph(stub, s, large, kLargeBytes), 3, /*quiet=*/true).split;
  CHECK(seen.split >= 1);
  CHECK(seen.combined >= 1);
  // Quiet: the releases above wrote nothing (expect() checks each tag in order); a bad
  // release is still answered, naming the handle.
  ring.push(release_completion_entry(7, 424242));
  const RawRing::Answer bad = ring.expect(7);
  CHECK(bad.entry.status == 1 + static_cast<std::uint32_t>(accord::ErrorKind::Invalid));
  CHECK_THAT(bad.message, Catch::Matchers::Contains("424242"));
  require_serving(d, stub, s);
}

TEST_CASE("a client that asks for no features gets an acceptance and a terminal answer for every submission",
          "[daemon][robustness][ring]") {
  TestDaemon d;
  Stub& stub = d.stub();
  const Session s = d.open_session();
  RawRing ring(s);
  std::uint64_t buffer = 0;
  REQUIRE_OK(allocate(stub, s, 64, &buffer));
  const std::uint64_t graph = fill_graph(stub, s, buffer);
  const Answers seen = submit_many(ring, graph, 20, /*quiet=*/false);
  CHECK(seen.combined == 0);
  CHECK(seen.split == 20);
  require_serving(d, stub, s);
}

TEST_CASE("the inline policy runs on the poller only graphs measured short", "[robustness][ring]") {
  accord::service::RingInlinePolicy policy;
  CHECK_FALSE(policy.run_here(5));  // never measured
  policy.ran(5, accord::CompletionProfile{3.0, 1.0});
  CHECK(policy.run_here(5));
  CHECK_FALSE(policy.run_here(5 + 64));  // same slot, another graph
  policy.ran(5, accord::CompletionProfile{500.0, 2.0});
  CHECK_FALSE(policy.run_here(5));  // measured long now
  policy.ran(6, accord::CompletionProfile{4.0, std::nullopt});
  CHECK_FALSE(policy.run_here(6));  // nothing ran: not a measurement
  CHECK_FALSE(policy.run_here(0));
}

}  // namespace robustness
