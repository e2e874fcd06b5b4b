// The bare floor under the submission ring: a round trip between this process and a
// child through one SubmissionRing, a SubmitEntry one way and a CompletionEntry back, the
// child serving it as accordd's poller would. Both sides spin for `spin`, then sleep on the
// doorbells. Used by ring_bench and daemon_ring_bench, so the floor and the daemon rows come
// from the same program.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "proto/wire/submission_ring.h"
#include "tests/bench/bench_util.h"

namespace accord::bench {

using namespace accord::wire;

inline constexpr auto kForever = std::chrono::nanoseconds(-1);
inline constexpr std::uint64_t kStop = ~std::uint64_t{0};

// The serving side: echoes each entry's tag back until it gets kStop.
[[noreturn]] inline void serve_round_trips(int fd, std::chrono::nanoseconds spin) {
  auto ring = SubmissionRing::attach(UniqueFd(fd));
  if (!ring.ok()) ::_exit(2);
  RingConsumer<SubmitEntry> requests(ring.value().submissions());
  RingProducer<CompletionEntry> answers(ring.value().completions());
  for (;;) {
    SubmitEntry e;
    const PopResult r = requests.try_pop(e);
    if (r == PopResult::Corrupt) ::_exit(3);
    if (r == PopResult::Empty) {
      requests.wait(spin, kForever);
      continue;
    }
    if (e.tag == kStop) ::_exit(0);
    CompletionEntry done;
    done.tag = e.tag;
    done.terminal = 1;
    if (!answers.try_push(done)) ::_exit(4);
  }
}

inline Summary round_trips(std::size_t iterations, std::chrono::nanoseconds spin) {
  SubmissionRing ring = unwrap(SubmissionRing::create({64, 64}), "SubmissionRing::create");
  const int fd = ::dup(ring.fd());
  const pid_t child = ::fork();
  if (child == 0) serve_round_trips(fd, spin);
  ::close(fd);
  RingProducer<SubmitEntry> requests(ring.submissions());
  RingConsumer<CompletionEntry> answers(ring.completions());
  std::vector<double> samples;
  samples.reserve(iterations);
  for (std::size_t i = 0; i < iterations + 1000; ++i) {  // the first 1,000 warm up
    SubmitEntry e;
    e.opcode = static_cast<std::uint32_t>(RingOp::Submit);
    e.tag = i;
    const auto begin = Clock::now();
    if (!requests.try_push(e)) {
      std::fprintf(stderr, "ring_bench: the ring is full\n");
      std::exit(1);
    }
    CompletionEntry done;
    while (answers.try_pop(done) != PopResult::Ok) answers.wait(spin, kForever);
    const auto end = Clock::now();
    if (done.tag != i) {
      std::fprintf(stderr, "ring_bench: answer %llu for request %zu\n", static_cast<unsigned long long>(done.tag), i);
      std::exit(1);
    }
    if (i >= 1000) samples.push_back(elapsed_ns(begin, end) / 1000.0);
  }
  SubmitEntry stop;
  stop.tag = kStop;
  while (!requests.try_push(stop)) std::this_thread::yield();
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::fprintf(stderr, "ring_bench: the server failed\n");
  return summarize(samples);
}


}  // namespace accord::bench
