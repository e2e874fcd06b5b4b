// "Submit does no heap allocation" (ARCHITECTURE.md engine item 3), checked by counting
// operator new calls on the submitting thread: on the ManualDevice, and end to end on
// the real host device in inline mode, where the region also runs on this thread.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "daemon/devices/host/host_registration.h"
#include "tests/support/engine_fixture.h"

namespace {
thread_local long g_allocations = 0;
thread_local bool g_counting = false;
}  // namespace

// Counting replacements of the global allocation functions for this test binary. Every
// form allocates with malloc directly, so each new/delete pair is a malloc/free pair.
namespace {
void* counted_malloc(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return counted_malloc(n); }
void* operator new[](std::size_t n) { return counted_malloc(n); }
// g++ 12 cannot see that the replaced operator new allocates with malloc and warns on
// these frees (a false positive: every new form above calls malloc).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace engine = accord::engine;
using accord::testing::EngineFixture;
using accord::testing::ManualDevice;

namespace {

struct Counting {
  Counting() { g_allocations = 0, g_counting = true; }
  ~Counting() { g_counting = false; }
  long count() const { return g_allocations; }
};

}  // namespace

TEST_CASE("submit, complete and wait allocate nothing on the ManualDevice", "[engine][scheduler][alloc]") {
  EngineFixture f(1);
  auto a = f.buffer(), b = f.buffer();
  auto g = f.prepare({EngineFixture::fill(a), EngineFixture::copy_on(b, a, accord::LaneKind::Upload)}).value();
  const int t0 = static_cast<ManualDevice::Region&>(*g->regions()[0].native).tag;
  const int t1 = static_cast<ManualDevice::Region&>(*g->regions()[1].native).tag;
  long allocations = 0;
  for (int i = 0; i < 100; ++i) {
    engine::Submission* s = nullptr;
    {
      Counting c;
      s = f.session().submit(*g, {}).value();
      allocations += c.count();
    }
    REQUIRE(f.device().wait_in_flight(1));
    {
      Counting c;
      f.device().complete(t0);
      allocations += c.count();
    }
    REQUIRE(f.device().wait_in_flight(1));
    {
      Counting c;
      f.device().complete(t1);
      REQUIRE(s->wait().ok());
      s->release_observer();
      allocations += c.count();
    }
  }
  CHECK(allocations == 0);
}

TEST_CASE("a prepared host graph submits and runs without allocating", "[engine][scheduler][alloc]") {
  accord::devices::DeviceRegistry registry;
  registry.add(accord::devices::host::make_host_device().value());
  engine::EngineOptions options;
  options.worker_threads = 0;  // inline: the region runs inside wait() on this thread
  auto eng = std::move(engine::Engine::create(options, std::move(registry)).value());
  {
    auto session = eng->open_session({}, "alloc").value();
    auto a = session->allocate(4096, accord::MemoryPlacement::host_visible()).value();
    auto b = session->allocate(4096, accord::MemoryPlacement::host_visible()).value();
    engine::GraphSpec spec;
    spec.ops.push_back(EngineFixture::fill(a));
    spec.ops.push_back(EngineFixture::copy_on(b, a, accord::LaneKind::Compute, 4096));
    auto g = session->prepare(std::move(spec)).value();
    long allocations = 0;
    for (int i = 0; i < 200; ++i) {
      Counting c;
      engine::Submission* s = session->submit(*g, {}).value();
      const bool ok = s->wait().ok();
      s->release_observer();
      allocations += c.count();
      REQUIRE(ok);
    }
    CHECK(allocations == 0);
    CHECK(session->statistics().completions == 200);
  }
}
