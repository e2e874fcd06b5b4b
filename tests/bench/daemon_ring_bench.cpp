// daemon_ring_bench (issue "Submission ring and many tenants"), side by side in one run:
// submit -> complete (submit, wait, drop) of a prepared one-region host graph (a 64-byte
// fill) embedded; through accordd over the ring with a spinning and with a sleeping
// waiter; through accordd over gRPC (RuntimeOptions::submission_ring = false); and, as
// the floor, a bare round trip between two processes through one ring, spinning and on
// futexes. p50 and p99 over --iterations samples per row (default 10,000). Starts its
// own accordd (--accordd PATH overrides the built one). Prints a table; asserts nothing
// except that every graph wrote its bytes.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/bench/daemon_process.h"
#include "tests/bench/probe_graph.h"
#include "tests/bench/ring_round_trip.h"

using namespace accord;
using namespace accord::bench;
using namespace std::chrono_literals;

namespace {

Summary submit_complete(const Runtime& runtime, std::size_t iterations) {
  ProbeGraph probe = make_probe_graph(runtime, GraphKind::Fill64);
  std::vector<double> samples;
  samples.reserve(iterations);
  for (std::size_t i = 0; i < iterations + 500; ++i) {  // the first 500 warm up
    const auto begin = Clock::now();
    {
      Completion c = unwrap(probe.exe.submit(), "submit");
      check(c.wait(), "wait");
    }  // dropped: released before the clock stops
    if (i >= 500) samples.push_back(elapsed_ns(begin, Clock::now()) / 1000.0);
  }
  if (!probe.verify()) fail("the probe graph did not write its bytes");
  return summarize(samples);
}

void row(const char* label, const Summary& s, double floor_p50) {
  std::printf("  %-44s %9.2f %9.2f %9.2f", label, s.p50, s.p90, s.p99);
  if (floor_p50 > 0) std::printf("   %6.2fx", s.p50 / floor_p50);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string accordd = ACCORD_ACCORDD_PATH;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--accordd") == 0 && i + 1 < argc) accordd = argv[++i];
    else rest.push_back(argv[i]);
  }
  const Flags flags = parse_flags(static_cast<int>(rest.size()), rest.data(), "  --accordd PATH\n");
  const std::size_t n = flags.iterations ? flags.iterations : 10'000;

  std::printf("daemon_ring_bench: submit -> wait -> drop of a one-region host graph (us, %zu samples per row)\n", n);
  std::printf("  %-44s %9s %9s %9s   %s\n", "how", "p50", "p90", "p99", "p50 / its floor");
  const Summary floor_spin = round_trips(n, std::chrono::hours(1));
  const Summary floor_futex = round_trips(n, 0ns);
  row("floor: bare ring round trip, both spinning", floor_spin, 0);
  row("floor: bare ring round trip, both on futexes", floor_futex, 0);

  {
    Runtime embedded = unwrap(Runtime::embedded(), "Runtime::embedded");
    row("embedded", submit_complete(embedded, n), 0);
  }
  DaemonProcess daemon(accordd);
  RuntimeOptions spin;
  spin.ring_spin = std::chrono::microseconds(1'000'000);
  row("accordd, ring, spinning waiter", submit_complete(unwrap(Runtime::connect(daemon.grpc_socket(), spin), "connect"), n),
      floor_spin.p50);
  RuntimeOptions sleep;
  sleep.ring_spin = std::chrono::microseconds(0);
  row("accordd, ring, sleeping waiter",
      submit_complete(unwrap(Runtime::connect(daemon.grpc_socket(), sleep), "connect"), n), floor_futex.p50);
  RuntimeOptions grpc;
  grpc.submission_ring = false;
  row("accordd, gRPC (three calls)",
      submit_complete(unwrap(Runtime::connect(daemon.grpc_socket(), grpc), "connect"), std::min<std::size_t>(n, 2000)),
      0);
  std::printf("  (accordd's pollers spin 50 us after an entry, then sleep; the gRPC row takes at most 2,000 samples)\n");
  print_machine_line();
  return 0;
}
