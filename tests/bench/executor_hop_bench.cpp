// executor_hop_bench (issue 10, GPU executors): what the hop to an executor process costs
// a launch. The round trip launch -> completion of an empty region on the fake GPU
// (tests/unit/executor/fake_gpu_device.h) in this process, against the same fake GPU
// served by fake_gpu_executor through ExecutorDevice: the command ring, the executor's
// consumer thread, the completion ring and accordd's completion thread (or the waiting
// thread itself, polling, as the engine's helpers do). Prints a table; asserts nothing.
//   executor_hop_bench [--iterations N] [--config NAME]   (default 20,000 per row)
#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <fstream>
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

// Voluntary context switches (a thread blocked: a futex sleep, a poll) of every thread
// of this process, and of process `pid` (-1: none) from /proc/PID/task/*/status.
long own_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}
long process_switches(pid_t pid) {
  if (pid <= 0) return 0;
  long total = 0;
  std::error_code ignored;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ignored)) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stol(line.substr(24));
  }
  return total;
}

struct Row {
  Summary latency;
  double own_switches = 0;       // per iteration
  double executor_switches = 0;  // per iteration
};

Row round_trips(devices::Device& device, Wait wait, std::size_t iterations, pid_t executor) {
  auto region = unwrap(device.lower(devices::RegionRequest{}), "lowering an empty region");
  BenchSink sink;
  std::vector<double> samples;
  samples.reserve(iterations);
  const std::size_t warmup = std::max<std::size_t>(iterations / 10, 200);
  long own_before = 0;
  long executor_before = 0;
  for (std::size_t i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      own_before = own_switches();
      executor_before = process_switches(executor);
    }
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
  Row row;
  row.own_switches = static_cast<double>(own_switches() - own_before) / static_cast<double>(iterations);
  row.executor_switches =
      static_cast<double>(process_switches(executor) - executor_before) / static_cast<double>(iterations);
  row.latency = summarize(samples);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv, "  configs: {fake,inline}/in-process[/spin|/sleep], {fake,inline}/executor/{spin,poll,sleep}, inline+words/executor/{poll,sleep}\n");
  const std::size_t iterations = flags.iterations ? flags.iterations : 20'000;
  spdlog::set_level(spdlog::level::warn);

  std::unique_ptr<devices::Device> local = testing::make_fake_gpu(0);
  std::unique_ptr<devices::Device> local_inline = testing::make_fake_gpu(0, true);
  const auto start = [](bool run_inline, bool words = false) {
    executor::ExecutorOptions options;
    options.binary = FAKE_GPU_EXECUTOR_PATH;
    options.backend = "fake";
    if (run_inline) options.device_options["fake.inline"] = "1";
    if (words) options.device_options["fake.words"] = "1";
    auto device = unwrap(executor::ExecutorDevice::open(options), "starting fake_gpu_executor");
    if (!device) check(internal_error("fake_gpu_executor has no gpu:0"), "starting fake_gpu_executor");
    return device;
  };
  auto remote = start(false);
  auto remote_inline = start(true);
  auto remote_words = start(true, true);

  std::printf("executor_hop_bench: launch -> completion of an empty region on the fake GPU (us, %zu samples)\n",
              iterations);
  std::printf("  fake: two worker threads woken by a condition variable; inline: the fake runs the region\n"
              "  in launch() (synchronous), so an executor row minus its in-process row is the hop itself\n"
              "  spin: the launching thread spins on the sink; poll: it calls poll_completions() while it waits;\n"
              "  sleep: it sleeps on a condition variable the sink signals\n"
              "  inline+words: the fake sets each slot's completion word (as CUDA's flags), which a\n"
              "  polling waiter reads in this process before the executor's completion record comes\n"
              "  csw: voluntary context switches per round trip (a thread blocked), in this process (accordd's\n"
              "  side) and in the executor process\n");
  std::printf("  %-26s %9s %9s %9s %9s %9s %9s %9s\n", "config", "p50", "p90", "p99", "max", "mean", "csw here",
              "csw exec");
  const struct {
    const char* name;
    devices::Device* device;
    Wait wait;
    pid_t executor;
  } rows[] = {{"fake/in-process/spin", local.get(), Wait::Spin, -1},
              {"fake/in-process/sleep", local.get(), Wait::Sleep, -1},
              {"fake/executor/spin", remote.get(), Wait::Spin, remote->executor_pid()},
              {"fake/executor/poll", remote.get(), Wait::Poll, remote->executor_pid()},
              {"fake/executor/sleep", remote.get(), Wait::Sleep, remote->executor_pid()},
              {"inline/in-process", local_inline.get(), Wait::Spin, -1},
              {"inline/executor/spin", remote_inline.get(), Wait::Spin, remote_inline->executor_pid()},
              {"inline/executor/poll", remote_inline.get(), Wait::Poll, remote_inline->executor_pid()},
              {"inline/executor/sleep", remote_inline.get(), Wait::Sleep, remote_inline->executor_pid()},
              {"inline+words/executor/poll", remote_words.get(), Wait::Poll, remote_words->executor_pid()},
              {"inline+words/executor/sleep", remote_words.get(), Wait::Sleep, remote_words->executor_pid()}};
  for (const auto& row : rows) {
    if (!flags.config.empty() && flags.config != row.name) continue;
    const Row r = round_trips(*row.device, row.wait, iterations, row.executor);
    const Summary& s = r.latency;
    std::printf("  %-26s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", row.name, s.p50, s.p90, s.p99, s.max, s.mean,
                r.own_switches, r.executor_switches);
  }
  print_machine_line();
  remote->shut_down();
  remote_inline->shut_down();
  remote_words->shut_down();
  local->shut_down();
  local_inline->shut_down();
  return 0;
}
