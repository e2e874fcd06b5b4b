// ring_bench (issue "Submission ring and many tenants"): the floor under every ring
// operation, measured by the same program that will measure the daemon over the ring:
// a round trip between two processes through one SubmissionRing, a SubmitEntry one way
// and a CompletionEntry back, with both sides spinning, and with both sides sleeping on
// the futex doorbells (no spin). The child process serves the ring as accordd's poller
// would (attach to the memfd, pop, push). Prints a table; asserts nothing.
//   ring_bench [--iterations N]     (default 20,000 per row)
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "tests/bench/ring_round_trip.h"

using namespace accord;
using namespace accord::bench;
using namespace accord::wire;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv, "");
  const std::size_t iterations = flags.iterations ? flags.iterations : 20'000;
  std::printf("ring_bench: a round trip between two processes through one submission ring (us, %zu samples)\n",
              iterations);
  std::printf("  %-38s %9s %9s %9s %9s\n", "both sides", "p50", "p90", "p99", "max");
  const struct {
    const char* label;
    std::chrono::nanoseconds spin;
  } rows[] = {{"spin (never sleep)", std::chrono::hours(1)}, {"futex (sleep at once)", 0ns}, {"spin 20 us, then futex", 20us}};
  for (const auto& row : rows) {
    const Summary s = round_trips(iterations, row.spin);
    std::printf("  %-38s %9.2f %9.2f %9.2f %9.2f\n", row.label, s.p50, s.p90, s.p99, s.max);
  }
  print_machine_line();
  return 0;
}
