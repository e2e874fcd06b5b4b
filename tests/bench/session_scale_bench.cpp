// session_scale_bench: engine throughput with 1, 4, 16 and 64 sessions in one process
// (engine item 13: per-session scheduling state and a ready queue). Each session is a
// thread looping submit -> wait -> drop of a one-region host graph (fill 64 bytes, copy
// them; the result is checked) on one engine with 2 workers. Prints, per session count,
// the median over --trials of total submissions per second and the median and p99
// submit -> wait latency of the middle trial.
// Run: build-bench/tests/bench/session_scale_bench [--seconds S] [--trials N] [--sessions N]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "daemon/devices/host/host_registration.h"
#include "daemon/engine/engine.h"
#include "tests/bench/bench_util.h"

namespace accord::bench {
namespace {

struct Trial {
  double per_second = 0;
  Summary latency_us;
};

engine::OperationSpec op(devices::OpKind kind, std::vector<engine::ViewSpec> bindings, std::uint8_t value = 0) {
  engine::OperationSpec o;
  o.kind = kind;
  o.fill_value = value;
  o.bindings = std::move(bindings);
  return o;
}

Trial run_trial(engine::Engine& eng, std::size_t sessions, double seconds) {
  std::atomic<bool> go{false}, stop{false};
  std::atomic<std::size_t> ready{0};
  std::atomic<std::uint64_t> done{0}, wrong{0};
  std::vector<std::vector<double>> latencies(sessions);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < sessions; ++t) {
    threads.emplace_back([&, t] {
      auto session = unwrap(eng.open_session({}, "bench"), "open_session");
      auto in = unwrap(session->allocate(64, MemoryPlacement::host_visible()), "allocate");
      auto out = unwrap(session->allocate(64, MemoryPlacement::host_visible()), "allocate");
      const auto value = static_cast<std::uint8_t>(t + 1);
      engine::GraphSpec spec;
      spec.ops = {op(devices::OpKind::Fill, {{in, 0, 64}}, value),
                  op(devices::OpKind::Copy, {{out, 0, 64}, {in, 0, 64}})};
      auto graph = unwrap(session->prepare(std::move(spec)), "prepare");
      std::vector<double>& samples = latencies[t];
      samples.reserve(1 << 20);
      ++ready;
      while (!go.load()) std::this_thread::yield();
      std::uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto begin = Clock::now();
        engine::Submission* s = unwrap(session->submit(*graph, {}), "submit");
        check(s->wait(), "wait");
        s->release_observer();
        if (samples.size() < samples.capacity()) samples.push_back(elapsed_ns(begin, Clock::now()) / 1e3);
        if (static_cast<std::uint8_t>(out->host_address()[63]) != value) ++wrong;
        ++n;
      }
      done += n;
    });
  }
  while (ready.load() != sessions) std::this_thread::yield();
  const auto begin = Clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = elapsed_ns(begin, Clock::now()) / 1e9;
  if (wrong.load() != 0) {
    std::fprintf(stderr, "%llu wrong results\n", static_cast<unsigned long long>(wrong.load()));
    std::exit(1);
  }
  std::vector<double> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  return Trial{static_cast<double>(done.load()) / elapsed, summarize(all)};
}

}  // namespace
}  // namespace accord::bench

int main(int argc, char** argv) {
  using namespace accord;
  using namespace accord::bench;
  double seconds = 1;
  std::size_t trials = 5;
  std::size_t only = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--trials") == 0) trials = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--sessions") == 0) only = std::strtoull(argv[i + 1], nullptr, 10);
  }
  devices::DeviceRegistry registry;
  registry.add(unwrap(devices::host::make_host_device({}), "make_host_device"));
  engine::EngineOptions options;
  options.worker_threads = 2;
  auto eng = unwrap(engine::Engine::create(options, std::move(registry)), "Engine::create");
  std::printf("session_scale_bench: one engine, 2 workers, one thread per session, submit -> wait of fill64+copy\n");
  std::printf("  %8s  %14s  %12s  %12s   (median of %zu trials of %.1f s)\n", "sessions", "submits/s", "lat p50 us",
              "lat p99 us", trials, seconds);
  for (std::size_t sessions : {1, 4, 16, 64}) {
    if (only != 0 && sessions != only) continue;
    std::vector<Trial> runs;
    for (std::size_t i = 0; i < trials; ++i) runs.push_back(run_trial(*eng, sessions, seconds));
    std::sort(runs.begin(), runs.end(), [](const Trial& a, const Trial& b) { return a.per_second < b.per_second; });
    const Trial& mid = runs[runs.size() / 2];
    std::printf("  %8zu  %14.0f  %12.1f  %12.1f\n", sessions, mid.per_second, mid.latency_us.p50, mid.latency_us.p99);
  }
  print_machine_line();
  return 0;
}
