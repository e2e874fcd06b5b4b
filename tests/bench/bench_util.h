// Helpers the hand-written benchmarks share: percentiles of per-iteration timings, thread
// CPU time, a line on machine load, and the two flags that keep a run short enough for
// valgrind --tool=callgrind (--iterations N, --config NAME).
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "accord/status.h"

namespace accord::bench {

using Clock = std::chrono::steady_clock;

inline double elapsed_ns(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double, std::nano>(end - begin).count();
}

// CPU time of the calling thread in nanoseconds: unlike wall time it leaves out the
// time slices other processes take, which matters on a shared 2-core machine. A
// system call (no vDSO), a few hundred nanoseconds: only for operations of >= 10 us.
inline double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// CPU time of a clock in nanoseconds: CLOCK_PROCESS_CPUTIME_ID (every thread of this
// process) or another process's clock (clock_getcpuclockid); -1 when it cannot be read.
inline double process_cpu_ns(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return -1;
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Order statistics of one configuration's samples (any unit; the caller picks).
struct Summary {
  std::size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles; sorts `samples` in place.
inline Summary summarize(std::vector<double>& samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(k, samples.size() - 1)];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  return s;
}

// --iterations N (measured repetitions; 0 keeps each configuration's default) and
// --config NAME (run only the configuration of that name; empty runs all).
struct Flags {
  std::size_t iterations = 0;
  std::string config;
};

inline Flags parse_flags(int argc, char** argv, const char* usage) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      flags.iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--config") == 0 && has_value) {
      flags.config = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--config NAME]\n%s", argv[0], usage);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
  }
  return flags;
}

// One line on the machine: online CPUs and the 1-minute load when the run ended, since
// other work on a shared machine moves the tails (and, with few cores, the medians).
inline void print_machine_line() {
  double load = -1;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  std::printf("  machine: %ld online CPUs, load average %.2f at the end of the run\n",
              sysconf(_SC_NPROCESSORS_ONLN), load);
}

// Aborts the benchmark, naming `what`, when a call that must succeed did not.
inline void check(const Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "benchmark setup failed: %s: %s\n", what, status.to_string().c_str());
  std::exit(1);
}

template <class T>
T unwrap(Result<T> result, const char* what) {
  check(result.status(), what);
  return std::move(result).value();
}

}  // namespace accord::bench
