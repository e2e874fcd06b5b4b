// Supervision of GPU executors without a GPU: fake_gpu_executor is killed, dies, faults,
// hangs, never says hello or says garbage, and ExecutorDevice must fail exactly the work
// that was in flight, tell its listener, restart within its rate limit, and leave no
// process or descriptor behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {
namespace {

using Catch::Contains;

// Launches `count` slots of a region that sleeps `ms`, with fresh sinks.
struct Flight {
  std::unique_ptr<devices::LoadedCode> code;
  std::unique_ptr<devices::NativeRegion> region;
  std::vector<RecordingSink> sinks;
  Flight(devices::Device& device, std::uint32_t count, std::uint32_t ms) : sinks(count) {
    code = load_kernel(device, "fake.sleep_ms", 0, ms);
    region = lower_kernel(device, *code, count);
    for (std::uint32_t slot = 0; slot < count; ++slot) device.launch(*region, {slot, {}}, sinks[slot]);
  }
};

void require_recovery(const RecordingListener& listener, int times) {
  REQUIRE(eventually([&] { return listener.recovered() == times; }));
  const std::vector<std::string> events = listener.events();
  REQUIRE(events.size() == static_cast<std::size_t>(2 * times));
  CHECK_THAT(events[events.size() - 2], Contains("lost: "));
  CHECK_THAT(events.back(), Contains("recovered: executor restarted (pid "));
}

// The device works after a restart: a new region computes.
void require_usable(devices::Device& device) {
  auto code = load_kernel(device, "fake.sleep_ms");
  auto region = lower_kernel(device, *code);
  RecordingSink sink;
  device.launch(*region, {}, sink);
  REQUIRE(sink.wait());
  CHECK(sink.done());
}

}  // namespace

TEST_CASE("killing the executor mid-flight fails each launch in flight once, then it restarts", "[executor]") {
  auto device = open_fake();
  RecordingListener listener;
  device->attach(listener);
  auto stale_code = load_kernel(*device, "fake.sleep_ms");
  auto stale_region = lower_kernel(*device, *stale_code);
  auto stale_memory = device->allocate({4096, MemoryPlacement::gpu_local(0)});
  REQUIRE(stale_memory.ok());
  Flight flight(*device, 8, 5000);
  const pid_t first = device->executor_pid();
  std::this_thread::sleep_for(50ms);  // let the executor take the launches
  REQUIRE(::kill(first, SIGKILL) == 0);

  for (RecordingSink& sink : flight.sinks) {
    REQUIRE(sink.wait());
    CHECK(sink.error().kind() == ErrorKind::DeviceLost);
    CHECK_THAT(std::string(sink.error().message()), Contains("gpu:0 executor (pid " + std::to_string(first) + ")"));
    CHECK_THAT(std::string(sink.error().message()), Contains("killed by signal 9"));
  }
  require_recovery(listener, 1);
  CHECK_THAT(listener.events()[0], Contains("killed by signal 9"));
  CHECK(device->generation() == 2);
  CHECK(device->restarts() == 1);
  CHECK(device->executor_pid() != first);
  CHECK_FALSE(process_exists(first));
  std::this_thread::sleep_for(20ms);
  for (RecordingSink& sink : flight.sinks) CHECK(sink.reports() == 1);

  // Objects of the first executor are dead: a launch fails at once, naming why.
  RecordingSink stale;
  device->launch(*stale_region, {}, stale);
  CHECK(stale.reports() == 1);
  CHECK(stale.error().kind() == ErrorKind::DeviceLost);
  CHECK_THAT(std::string(stale.error().message()), Contains("made before executor restart"));
  devices::Operation op;
  op.kind = devices::OpKind::Kernel;
  op.code = stale_code.get();
  auto relowered = device->lower(devices::RegionRequest::of(std::span(&op, 1)));
  CHECK(relowered.status().kind() == ErrorKind::DeviceLost);
  // Releasing them sends nothing to the new executor.
  stale_region.reset();
  stale_code.reset();
  stale_memory->reset();
  flight.region.reset();
  require_usable(*device);
}

TEST_CASE("SIGTERM and SIGINT do not end an executor: accordd drains its work first", "[executor]") {
  auto device = open_fake();
  RecordingListener listener;
  device->attach(listener);
  Flight flight(*device, 2, 100);
  const pid_t pid = device->executor_pid();
  REQUIRE(::kill(pid, SIGTERM) == 0);
  REQUIRE(::kill(pid, SIGINT) == 0);
  for (RecordingSink& s : flight.sinks) {
    REQUIRE(s.wait());
    CHECK(s.done());
  }
  require_usable(*device);
  CHECK(device->executor_pid() == pid);
  CHECK(listener.lost() == 0);
}

TEST_CASE("a faulting kernel fails its region with Execution and the rest with DeviceLost", "[executor]") {
  auto device = open_fake();
  RecordingListener listener;
  device->attach(listener);
  auto sleep = load_kernel(*device, "fake.sleep_ms", 0, 200);
  auto fault = load_kernel(*device, "fake.fault");
  auto running = lower_kernel(*device, *sleep);
  auto queued = lower_kernel(*device, *sleep);
  auto faulting = lower_kernel(*device, *fault);
  RecordingSink running_sink;
  RecordingSink queued_sink;
  RecordingSink fault_sink;
  device->launch(*running, {}, running_sink);
  const devices::RegionWait after_running[1] = {{running.get(), 0}};
  device->launch(*queued, devices::RegionWaits{0, after_running}, queued_sink);  // held until `running` ends
  device->launch(*faulting, {}, fault_sink);

  REQUIRE(fault_sink.wait());
  CHECK(fault_sink.error().kind() == ErrorKind::Execution);
  CHECK_THAT(std::string(fault_sink.error().message()), Contains("illegal memory access"));
  REQUIRE(running_sink.wait());
  REQUIRE(queued_sink.wait());
  CHECK(running_sink.error().kind() == ErrorKind::DeviceLost);
  CHECK(queued_sink.error().kind() == ErrorKind::DeviceLost);
  require_recovery(listener, 1);
  CHECK_THAT(listener.events()[0], Contains("reported the device lost"));
  CHECK_THAT(listener.events()[0], Contains("sticky error"));
  CHECK_THAT(listener.events()[1], Contains("after: gpu:0 executor"));
  for (const RecordingSink* s : {&running_sink, &queued_sink, &fault_sink}) CHECK(s->reports() == 1);
  running.reset();
  queued.reset();
  faulting.reset();
  require_usable(*device);
}

TEST_CASE("an executor that dies mid-flight is restarted with its exit status in the cause", "[executor]") {
  auto device = open_fake();
  RecordingListener listener;
  device->attach(listener);
  Flight flight(*device, 1, 5000);  // one of the two workers busy, the other free to die
  auto die = load_kernel(*device, "fake.die");
  auto dying = lower_kernel(*device, *die);
  RecordingSink sink;
  device->launch(*dying, {}, sink);
  REQUIRE(sink.wait());
  CHECK(sink.error().kind() == ErrorKind::DeviceLost);
  CHECK_THAT(std::string(sink.error().message()), Contains("exited with status 57"));
  for (RecordingSink& s : flight.sinks) {
    REQUIRE(s.wait());
    CHECK(s.error().kind() == ErrorKind::DeviceLost);
  }
  require_recovery(listener, 1);
  dying.reset();
  flight.region.reset();
  require_usable(*device);
}

TEST_CASE("a restart storm beyond max_restarts in the window waits with a doubling backoff", "[executor]") {
  executor::ExecutorOptions options = fake_options();
  options.max_restarts = 2;
  options.restart_window = 60s;
  options.backoff_initial = 150ms;
  options.backoff_max = 300ms;
  auto device = open_fake(options);
  RecordingListener listener;
  device->attach(listener);
  std::vector<std::chrono::milliseconds> took;
  for (int i = 0; i < 5; ++i) {
    const pid_t pid = device->executor_pid();
    REQUIRE(pid > 0);
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(::kill(pid, SIGKILL) == 0);
    REQUIRE(eventually([&] { return listener.recovered() == i + 1; }));
    // Rounded up: the pause is measured from before the kill, but a clock read that
    // truncates 149.9 ms to 149 would fail a wait that did last 150 ms.
    took.push_back(std::chrono::ceil<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
  }
  // Two restarts at once, then 150, 300, 300 ms (capped) before each.
  CHECK(took[2] >= 150ms);
  CHECK(took[3] >= 300ms);
  CHECK(took[4] >= 300ms);
  CHECK(device->last_backoff() == 300ms);
  CHECK(device->restarts() == 5);
  require_usable(*device);
}

TEST_CASE("a control request the executor never answers makes it lost and restarted", "[executor]") {
  executor::ExecutorOptions options = fake_options();
  options.request_timeout = 300ms;
  auto device = open_fake(options);
  RecordingListener listener;
  device->attach(listener);
  devices::CodeImage image;
  image.name = "fake.hang_load";
  auto hung = device->load(image, {});
  REQUIRE_FALSE(hung.ok());
  CHECK(hung.status().kind() == ErrorKind::DeviceLost);
  CHECK_THAT(std::string(hung.status().message()), Contains("did not answer 'load' within 300 ms"));
  require_recovery(listener, 1);
  require_usable(*device);
}

TEST_CASE("an executor that never says hello, says garbage or exits fails to open with the cause", "[executor]") {
  const auto open_with = [](const char* mode) {
    executor::ExecutorOptions options = fake_options();
    options.extra_args = {"--fake-mode", mode};
    options.hello_timeout = 300ms;
    return executor::ExecutorDevice::open(options);
  };
  auto silent = open_with("silent");
  REQUIRE_FALSE(silent.ok());
  CHECK_THAT(std::string(silent.status().message()), Contains("said no hello within 300 ms"));
  CHECK_THAT(std::string(silent.status().message()), Contains("killed by signal 9"));
  auto garbage = open_with("garbage");
  REQUIRE_FALSE(garbage.ok());
  CHECK_THAT(std::string(garbage.status().message()), Contains("malformed hello"));
  auto exits = open_with("exit");
  REQUIRE_FALSE(exits.ok());
  CHECK_THAT(std::string(exits.status().message()), Contains("hung up before its hello"));
  CHECK_THAT(std::string(exits.status().message()), Contains("exited with status 7"));
  // Every child was reaped.
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("shut_down leaves no executor process and no descriptor behind", "[executor]") {
  {
    auto warm = open_fake();  // first use: spdlog and the like set themselves up
  }
  const std::size_t before = open_fds();
  pid_t pid = -1;
  {
    auto device = open_fake();
    pid = device->executor_pid();
    auto memory = device->allocate({4096, MemoryPlacement::gpu_local(0)});
    REQUIRE(memory.ok());
    Flight flight(*device, 4, 1);
    for (RecordingSink& s : flight.sinks) REQUIRE(s.wait());
    flight.region.reset();
    memory->reset();
    device->shut_down();
    CHECK_FALSE(process_exists(pid));
    device->shut_down();  // twice is harmless
  }
  CHECK_FALSE(process_exists(pid));
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
  CHECK(open_fds() == before);
}

TEST_CASE("shut_down while launches are in flight abandons them without reporting", "[executor]") {
  auto device = open_fake();
  Flight flight(*device, 3, 5000);
  std::this_thread::sleep_for(20ms);
  device->shut_down();
  std::this_thread::sleep_for(50ms);
  for (const RecordingSink& s : flight.sinks) CHECK(s.reports() == 0);
}

}  // namespace accord::testing
