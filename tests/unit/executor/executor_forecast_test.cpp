// The engine's forecast sleep (SchedulerOptions::forecast_sleep, an embedded runtime's
// ForecastSleep::Always) on a device that completes by polling: a fake GPU behind its
// executor, running a kernel that sleeps a known time. Waiters sleep through most of a
// graph's runs once its first waits measured them, and do not sleep at all when the
// option is off.
#include <chrono>
#include <cstdint>

#include "client/api/wait_forecast.h"
#include "daemon/devices/composition/open_devices.h"
#include "daemon/engine/engine.h"
#include "tests/unit/executor/executor_test_support.h"

namespace accord::testing {
namespace {

// Shorter than SchedulerOptions::device_wait_spin (1 ms), so that a measuring wait
// watches its run end rather than falling asleep on the submission (which records
// nothing).
constexpr std::uint32_t kKernelUs = 400;
constexpr int kWaits = 48;

struct SleepingKernelEngine {
  std::unique_ptr<engine::Engine> engine;
  engine::Ref<engine::Session> session;
  engine::Ref<engine::PreparedGraph> graph;

  explicit SleepingKernelEngine(bool forecast_sleep) {
    devices::DeviceSettings settings = fake_executor_settings();
    settings.options["fake.devices"] = "1";
    auto registry = devices::open_devices(settings);
    REQUIRE(registry.ok());
    REQUIRE(registry->size() == 2);
    REQUIRE(registry->at(1).completes_by_polling());
    engine::EngineOptions options;
    options.forecast_sleep = forecast_sleep;
    auto created = engine::Engine::create(options, std::move(registry).value());
    REQUIRE(created.ok());
    engine = std::move(created).value();
    session = engine->open_session({}, "forecast test").value();

    auto word = session->allocate(4, MemoryPlacement::gpu_local(0));
    REQUIRE(word.ok());
    devices::CodeImage image;
    image.name = "fake.sleep_us";
    image.device = DeviceId::gpu(0);
    KernelContract contract;
    contract.bindings.push_back({4, 4, Access::ReadWrite, "u32"});
    append_constant(contract.constants, kKernelUs);
    auto kernel = session->load_kernel(image, contract);
    REQUIRE(kernel.ok());
    engine::OperationSpec op;
    op.kind = devices::OpKind::Kernel;
    op.kernel = kernel.value();
    op.bindings.push_back({word.value(), 0, 4});
    engine::GraphSpec spec;
    spec.ops.push_back(std::move(op));
    auto prepared = session->prepare(std::move(spec));
    REQUIRE(prepared.ok());
    graph = std::move(prepared).value();
  }

  // Submits and waits kWaits times; every run must succeed. Returns the sleeps taken.
  std::uint64_t run_all() {
    const std::uint64_t before = forecast_sleeps();
    for (int i = 0; i < kWaits; ++i) {
      auto submitted = session->submit(*graph, {});
      REQUIRE(submitted.ok());
      engine::Submission* s = submitted.value();
      const Status waited = s->wait();
      s->release_observer();
      REQUIRE(waited.ok());
    }
    return forecast_sleeps() - before;
  }
};

}  // namespace

TEST_CASE("with the forecast sleep, the waits after the measuring ones sleep through most of the run",
          "[executor][forecast]") {
  SleepingKernelEngine e(true);
  const std::uint64_t sleeps = e.run_all();
  // Waits 17-48 may sleep, but for the 17th and the 33rd, which measure: 30 (all 30 on a
  // quiet machine). On a busy one each wake-up after the end lowers the forecast by a
  // quarter, and sleeps stop below about 30 us: from ~400 us that still leaves 8.
  CHECK(sleeps >= 5);
  CHECK(sleeps <= 30);
  // The measuring waits taught it; it is a low estimate (a wait that woke after the end,
  // late on a busy machine, lowers it by a quarter; each rise is at most an eighth), so
  // it may sit below the kernel's time but never far above it.
  const std::int64_t forecast = e.graph->forecast().forecast_ns();
  CHECK(forecast > 0);
  CHECK(forecast < std::int64_t{kKernelUs} * 1000 * 10);
}

TEST_CASE("without the forecast sleep no wait sleeps", "[executor][forecast]") {
  SleepingKernelEngine e(false);
  CHECK(e.run_all() == 0);
  CHECK(e.graph->forecast().forecast_ns() == 0);  // nothing measured: the option is off
}

}  // namespace accord::testing
