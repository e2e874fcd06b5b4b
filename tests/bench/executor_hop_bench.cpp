// executor_hop_bench (issue 10, GPU executors): what the hop to an executor process costs
// a launch. The round trip launch -> completion of an empty region on the fake GPU
// (tests/unit/executor/fake_gpu_device.h) in this process, against the same fake GPU
// served by fake_gpu_executor through ExecutorDevice: the command ring, the executor's
// consumer thread, the completion ring and accordd's completion thread (or the waiting
// thread itself, polling, as the engine's helpers do). Prints a table; asserts nothing.
//   executor_hop_bench [--iterations N] [--config NAME]   (default 20,000 per row)
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/executor/executor_device.h"
#include "tests/bench/bench_util.h"
#include "tests/unit/executor/fake_gpu_device.h"

using namespace accord;
using namespace accord::bench;

namespace {

// Reports into an atomic the bench thread spins on, or wakes it on a condition variable.
class BenchSink final : public devices::CompletionSink {
 public:
  void on_done() noexcept override { finish(); }
  void on_error(Status status) noexcept override {
    std::fprintf(stderr, "launch failed: %s\n", status.to_string().c_str());
    std::exit(1);
  }
  void on_cancelled() noexcept override { finish(); }

  void arm() { done_.store(false, std::memory_order_relaxed); }
  bool done() const { return done_.load(std::memory_order_acquire); }
  void wait_sleeping() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done(); });
  }

 private:
  void finish() {
    {
      std::lock_guard lock(mu_);
      done_.store(true, std::memory_order_release);
    }
    cv_.notify_one();
  }
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

enum class Wait { Spin, Poll, Sleep };

Summary round_trips(devices::Device& device, Wait wait, std::size_t iterations) {
  auto region = unwrap(device.lower(devices::RegionRequest{}), "lowering an empty region");
  BenchSink sink;
  std::vector<double> samples;
  samples.reserve(iterations);
  const std::size_t warmup = std::max<std::size_t>(iterations / 10, 200);
  for (std::size_t i = 0; i < warmup + iterations; ++i) {
    sink.arm();
    const auto begin = Clock::now();
    device.launch(*region, {}, sink);
    switch (wait) {
      case Wait::Spin:
        while (!sink.done()) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
        break;
      case Wait::Poll:
        while (!sink.done()) device.poll_completions();
        break;
      case Wait::Sleep: sink.wait_sleeping(); break;
    }
    const auto end = Clock::now();
    if (i >= warmup) samples.push_back(elapsed_ns(begin, end) / 1000.0);
  }
  return summarize(samples);
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv, "  configs: {fake,inline}/in-process[/spin|/sleep], {fake,inline}/executor/{spin,poll,sleep}\n");
  const std::size_t iterations = flags.iterations ? flags.iterations : 20'000;
  spdlog::set_level(spdlog::level::warn);

  std::unique_ptr<devices::Device> local = testing::make_fake_gpu(0);
  std::unique_ptr<devices::Device> local_inline = testing::make_fake_gpu(0, true);
  const auto start = [](bool run_inline) {
    executor::ExecutorOptions options;
    options.binary = FAKE_GPU_EXECUTOR_PATH;
    options.backend = "fake";
    if (run_inline) options.device_options["fake.inline"] = "1";
    auto device = unwrap(executor::ExecutorDevice::open(options), "starting fake_gpu_executor");
    if (!device) check(internal_error("fake_gpu_executor has no gpu:0"), "starting fake_gpu_executor");
    return device;
  };
  auto remote = start(false);
  auto remote_inline = start(true);

  std::printf("executor_hop_bench: launch -> completion of an empty region on the fake GPU (us, %zu samples)\n",
              iterations);
  std::printf("  fake: two worker threads woken by a condition variable; inline: the fake runs the region\n"
              "  in launch() (synchronous), so an executor row minus its in-process row is the hop itself\n"
              "  spin: the launching thread spins on the sink; poll: it calls poll_completions() while it waits;\n"
              "  sleep: it sleeps on a condition variable the sink signals\n");
  std::printf("  %-26s %9s %9s %9s %9s %9s\n", "config", "p50", "p90", "p99", "max", "mean");
  const struct {
    const char* name;
    devices::Device* device;
    Wait wait;
  } rows[] = {{"fake/in-process/spin", local.get(), Wait::Spin},
              {"fake/in-process/sleep", local.get(), Wait::Sleep},
              {"fake/executor/spin", remote.get(), Wait::Spin},
              {"fake/executor/poll", remote.get(), Wait::Poll},
              {"fake/executor/sleep", remote.get(), Wait::Sleep},
              {"inline/in-process", local_inline.get(), Wait::Spin},
              {"inline/executor/spin", remote_inline.get(), Wait::Spin},
              {"inline/executor/poll", remote_inline.get(), Wait::Poll},
              {"inline/executor/sleep", remote_inline.get(), Wait::Sleep}};
  for (const auto& row : rows) {
    if (!flags.config.empty() && flags.config != row.name) continue;
    const Summary s = round_trips(*row.device, row.wait, iterations);
    std::printf("  %-26s %9.2f %9.2f %9.2f %9.2f %9.2f\n", row.name, s.p50, s.p90, s.p99, s.max, s.mean);
  }
  print_machine_line();
  remote->shut_down();
  remote_inline->shut_down();
  local->shut_down();
  local_inline->shut_down();
  return 0;
}
