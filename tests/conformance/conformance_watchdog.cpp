// A Catch2 listener for the conformance suite: names the transport at the start of the
// run, and aborts with the test's name when one test case runs far too long, so a
// deadlock or a lost wakeup in a transport is reported as such instead of hanging.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "tests/conformance/conformance_runtime.h"

namespace {

// Well under the per-test ctest TIMEOUT (120 s), far above any test's normal runtime.
constexpr std::chrono::seconds kTestCaseLimit{90};

class Watchdog {
 public:
  Watchdog() : thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void arm(std::string name) {
    {
      std::lock_guard lock(mutex_);
      name_ = std::move(name);
      deadline_ = std::chrono::steady_clock::now() + kTestCaseLimit;
      armed_ = true;
    }
    changed_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (!armed_) {
        changed_.wait(lock);
        continue;
      }
      if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
          std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr,
                     "conformance watchdog: test case '%s' (transport %s) did not finish "
                     "within %lld s; aborting: a deadlock or a lost wakeup\n",
                     name_.c_str(), conformance_transport_name(),
                     static_cast<long long>(kTestCaseLimit.count()));
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  bool armed_ = false;
  std::string name_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

Watchdog& watchdog() {
  static Watchdog instance;
  return instance;
}

struct ConformanceListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  void testRunStarting(const Catch::TestRunInfo& info) override {
    std::fprintf(stderr, "accord conformance suite over the %s transport\n",
                 conformance_transport_name());
    TestEventListenerBase::testRunStarting(info);
  }
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    watchdog().arm(info.name);
    TestEventListenerBase::testCaseStarting(info);
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    watchdog().disarm();
    TestEventListenerBase::testCaseEnded(stats);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ConformanceListener)
