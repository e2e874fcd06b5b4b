// submit_latency_bench: submit -> complete latency of a prepared one-region host graph (64-byte fill;
// accord.add_f32 of 16 floats), embedded runtime, worker_threads 0/1/2/4, wait() or poll-spin.
// Run: build-bench/tests/bench/submit_latency_bench [--config fill64/w2] [--iterations N]
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "accord/accord.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/probe_graph.h"

namespace accord::bench {
namespace {

enum class WaitMode { Wait, PollSpin };

struct Config {
  std::string name;
  GraphKind graph;
  std::size_t workers;
  WaitMode wait;
};

std::vector<Config> all_configs() {
  std::vector<Config> configs;
  for (GraphKind g : {GraphKind::Fill64, GraphKind::AddF32x16}) {
    const std::string prefix = g == GraphKind::Fill64 ? "fill64" : "add16";
    for (std::size_t w : {0, 1, 2, 4})
      configs.push_back({prefix + "/w" + std::to_string(w), g, w, WaitMode::Wait});
    configs.push_back({prefix + "/w2/spin", g, 2, WaitMode::PollSpin});
  }
  return configs;
}

struct Measured {
  Summary latency_us;        // client-observed submit -> wait() returned -> dropped
  double engine_us_p50 = 0;  // CompletionProfile::elapsed_us (accepted -> terminal)
  double queue_us_p50 = 0;   // CompletionProfile::queue_us (accepted -> region start)
  double switches_per_iter = 0;  // voluntary context switches of the process (futex sleeps)
};

long voluntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}

Measured run(const Config& config, std::size_t warmup, std::size_t iterations) {
  RuntimeOptions options;
  options.worker_threads = config.workers;
  Runtime runtime = unwrap(Runtime::embedded(options), "Runtime::embedded");

  const ProbeGraph probe = make_probe_graph(runtime, config.graph);
  const ExecutableGraph& exe = probe.exe;

  std::vector<double> latency(iterations), engine_us(iterations), queue_us(iterations);
  auto one = [&](std::size_t i, bool record) {
    const Clock::time_point begin = Clock::now();
    {
      auto c = exe.submit();
      check(c.status(), "submit");
      if (config.wait == WaitMode::Wait) {
        check(c->wait(), "wait");
      } else {
        while (!c->poll()) __builtin_ia32_pause();
      }
      if (record) {
        const Clock::time_point end = Clock::now();
        latency[i] = elapsed_ns(begin, end) / 1000.0;
        const CompletionProfile p = *c->profile();  // untimed: after `end`
        engine_us[i] = p.elapsed_us;
        queue_us[i] = p.queue_us.value_or(0);
      }
    }  // the completion is dropped here, freeing its graph slot
  };
  for (std::size_t i = 0; i < warmup; ++i) one(i, false);
  const long switches_before = voluntary_switches();
  for (std::size_t i = 0; i < iterations; ++i) one(i, true);
  const long switches = voluntary_switches() - switches_before;

  {
    if (!probe.verify()) {
      std::fprintf(stderr, "%s: the graph did not produce its result\n", config.name.c_str());
      std::exit(1);
    }
  }
  Measured m;
  m.latency_us = summarize(latency);
  m.engine_us_p50 = summarize(engine_us).p50;
  m.queue_us_p50 = summarize(queue_us).p50;
  m.switches_per_iter = static_cast<double>(switches) / static_cast<double>(iterations);
  return m;
}

constexpr const char* kUsage =
    "  --config NAME   one of fill64|add16 + /w0 /w1 /w2 /w4 /w2/spin (default: all)\n"
    "  --iterations N  measured iterations per configuration (default 20000)\n";

}  // namespace
}  // namespace accord::bench

int main(int argc, char** argv) {
  using namespace accord::bench;
  const Flags flags = parse_flags(argc, argv, kUsage);
  const std::size_t iterations = flags.iterations ? flags.iterations : 20000;
  const std::size_t warmup = flags.iterations ? std::min<std::size_t>(100, iterations) : 2000;

  std::vector<std::pair<Config, Measured>> results;
  for (const Config& config : all_configs()) {
    if (!flags.config.empty() && flags.config != config.name) continue;
    results.emplace_back(config, run(config, warmup, iterations));
  }
  if (results.empty()) {
    std::fprintf(stderr, "no configuration named '%s'\n%s", flags.config.c_str(), kUsage);
    return 2;
  }

  std::printf("submit_latency_bench: submit -> complete of a prepared one-region host graph,\n");
  std::printf("  embedded runtime, %zu warm-up + %zu measured iterations per configuration, times in us\n",
              warmup, iterations);
  std::printf("  fill64: fill of a 64-byte buffer; add16: accord.add_f32 of 16 floats\n");
  std::printf("  wait: c->wait() (the caller may run the region); spin: poll() until terminal (no helping)\n");
  print_machine_line();
  std::printf("\n");
  std::printf("%-15s | %7s | %-4s | %7s | %7s | %7s | %8s | %7s | %10s | %9s | %9s\n", "config", "workers", "wait",
              "p50", "p90", "p99", "max", "mean", "engine p50", "queue p50", "csw/iter");
  std::printf("----------------+---------+------+---------+---------+---------+----------+---------+------------"
              "+-----------+----------\n");
  for (const auto& [config, m] : results) {
    const Summary& s = m.latency_us;
    std::printf("%-15s | %7zu | %-4s | %7.2f | %7.2f | %7.2f | %8.1f | %7.2f | %10.2f | %9.2f | %9.2f\n",
                config.name.c_str(), config.workers, config.wait == WaitMode::Wait ? "wait" : "spin", s.p50, s.p90,
                s.p99, s.max, s.mean, m.engine_us_p50, m.queue_us_p50, m.switches_per_iter);
  }
  std::printf("\nengine p50: CompletionProfile::elapsed_us (accepted -> terminal); queue p50: accepted -> region\n");
  std::printf("start; csw/iter: voluntary context switches of the process per iteration (futex sleeps)\n");
  return 0;
}
