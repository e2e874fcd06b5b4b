// Shared helpers of the device conformance suite: Status matchers, a recording sink and
// listener, memory doubles that stand for another device's memory, and short ways to
// bind, lower, launch and read back. Device interface only: no engine, no backend header.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tests/conformance/device/device_test_case.h"
#include "tests/support/device_operations.h"

namespace accord::devices::conformance {

// ---------------------------------------------------------------------------------
// Status matchers.

inline const Status& status_of(const Status& status) { return status; }
template <class T>
const Status& status_of(const Result<T>& result) {
  return result.status();
}

// Fails with one of `kinds` and, when `fragments` is not empty, a message containing
// every one of them (case-insensitive). Empty `kinds` means any failure.
class FailsWithMatcher : public Catch::MatcherBase<Status> {
 public:
  FailsWithMatcher(std::vector<ErrorKind> kinds, std::vector<std::string> fragments)
      : kinds_(std::move(kinds)), fragments_(std::move(fragments)) {}
  bool match(const Status& status) const override;
  std::string describe() const override;

 private:
  std::vector<ErrorKind> kinds_;
  std::vector<std::string> fragments_;
};
inline FailsWithMatcher FailsWith(ErrorKind kind, std::vector<std::string> fragments = {}) {
  return FailsWithMatcher({kind}, std::move(fragments));
}
inline FailsWithMatcher FailsWithOneOf(std::vector<ErrorKind> kinds, std::vector<std::string> fragments = {}) {
  return FailsWithMatcher(std::move(kinds), std::move(fragments));
}

}  // namespace accord::devices::conformance

#define REQUIRE_OK(...) REQUIRE(::accord::devices::conformance::status_of(__VA_ARGS__).to_string() == "OK")
#define CHECK_STATUS(expr, matcher) CHECK_THAT(::accord::devices::conformance::status_of(expr), matcher)
#define REQUIRE_STATUS(expr, matcher) REQUIRE_THAT(::accord::devices::conformance::status_of(expr), matcher)

// Evaluates a Result<T>-valued expression, REQUIREs it to be OK and yields the value.
#define UNWRAP(...)                                                                      \
  ([&]() {                                                                               \
    auto accord_unwrap_result_ = (__VA_ARGS__);                                          \
    INFO("UNWRAP(" #__VA_ARGS__ ")");                                                    \
    REQUIRE_OK(accord_unwrap_result_);                                                   \
    return std::move(accord_unwrap_result_).value();                                     \
  }())

namespace accord::devices::conformance {

// Far above any conformant completion, so a lost completion fails instead of hanging.
inline constexpr std::chrono::seconds kCompletionLimit{10};

// ---------------------------------------------------------------------------------
// Doubles.

// Records every outcome reported to it, in which order relative to other sinks, and on
// which thread. Thread-safe: a device may report from its own thread.
class RecordingSink final : public CompletionSink {
 public:
  void on_done() noexcept override { record(0, Status()); }
  void on_error(Status status) noexcept override { record(1, std::move(status)); }
  void on_cancelled() noexcept override { record(2, Status()); }

  // Waits until at least `calls` outcomes were reported; false after kCompletionLimit.
  bool wait_for(int calls) const;
  int calls() const;
  int done() const;
  int errors() const;
  int cancelled() const;
  Status last_error() const;
  // Position of the latest report in a clock shared by every sink (1, 2, ...).
  std::uint64_t last_order() const;
  std::thread::id last_thread() const;

 private:
  void record(int outcome, Status status) noexcept;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::array<int, 3> counts_{};
  Status error_;
  std::uint64_t order_ = 0;
  std::thread::id thread_;
};

// Stands in for the registry: counts on_device_lost() calls and keeps the first cause.
class RecordingListener final : public DeviceListener {
 public:
  void on_device_lost(Status cause) noexcept override;
  int calls() const;
  Status first_cause() const;
  bool wait_for(int calls) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  int calls_ = 0;
  Status cause_;
};

// Host-mapped memory whose home is another device (an NPU's Shared pages, a host
// allocation seen from a GPU): anonymous pages mapped for the test. Not exportable.
// Thread-safe: the members are fixed at construction.
class HostMappedDouble final : public DeviceMemory {
 public:
  explicit HostMappedDouble(std::size_t bytes);
  ~HostMappedDouble() override;
  HostMappedDouble(const HostMappedDouble&) = delete;
  HostMappedDouble& operator=(const HostMappedDouble&) = delete;
  std::size_t bytes() const noexcept override { return bytes_; }
  std::byte* host_address() const noexcept override { return address_; }
  int export_fd() const noexcept override { return -1; }

 private:
  std::byte* address_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_ = 0;
};

// Memory of another device with no host address (another GPU's local memory).
// Thread-safe: it has no state.
class UnreachableDouble final : public DeviceMemory {
 public:
  std::size_t bytes() const noexcept override { return 4096; }
  std::byte* host_address() const noexcept override { return nullptr; }
  std::uint64_t device_address() const noexcept override { return 0x7f0000000000ull; }
  int export_fd() const noexcept override { return -1; }
};

// A DeviceInfo for a device other than `device` that could be the home of host-mapped
// memory: an NPU for the host device, the host for any other ("conformance double").
DeviceInfo host_mapped_home(const Device& device);
// A GPU other than `device`, as the home of UnreachableDouble.
DeviceInfo unreachable_home(const Device& device);

// ---------------------------------------------------------------------------------
// Device facts.

// Placements whose home is `device` or a neighbour: HostVisible, and GpuLocal,
// NpuLocal and Shared for the device's ordinal and the next one.
std::vector<MemoryPlacement> candidate_placements(const Device& device);
// The first candidate placement the device is the home of, if any.
std::optional<MemoryPlacement> home_placement(const Device& device);
bool has_lane(const Device& device, LaneKind lane);
// The lane the suite runs fills, copies and kernels on: Compute where the device has
// it, else its first lane.
LaneKind work_lane(const Device& device);

// ---------------------------------------------------------------------------------
// Memory, code and operations. Each REQUIREs what it needs and says why when it fails.

// Allocates `bytes` in the device's home placement; fails the test, naming the
// device, when it is the home of none.
std::unique_ptr<DeviceMemory> allocate(Device& device, std::size_t bytes);

// A binding of [offset, offset + length) of `memory` on its home device (length
// defaults to the rest of the memory).
OperationBinding bind(const DeviceMemory& memory, Access access, std::size_t offset = 0,
                      std::size_t length = static_cast<std::size_t>(-1));
// The same for memory admitted to the device that runs the operation.
OperationBinding bind_admitted(const DeviceMemory& memory, const AdmittedMemory& admission, Access access);

using devices::testing::copy_op;  // tests/support/device_operations.h
using devices::testing::fill_op;
using devices::testing::kernel_op;

// Loads `image` (one of the backend's ConformanceCode kernels, `what` naming it) onto
// `device` with `contract`; fails the test when the backend provides none.
std::unique_ptr<LoadedCode> load(Device& device, const std::optional<CodeImage>& image, const char* what,
                                 const KernelContract& contract);
// The contracts that go with ConformanceCode's kernels.
KernelContract one_binding_contract(std::size_t bytes = 4);
KernelContract sleep_contract(std::uint32_t microseconds);

std::unique_ptr<NativeRegion> lower(Device& device, std::span<const Operation> operations,
                                    std::span<const OperationEdge> edges = {}, std::uint32_t slots = 1);
// Launches `region` in `slot` and waits for its one outcome (REQUIRE).
void launch_and_wait(Device& device, NativeRegion& region, RecordingSink& sink, std::uint32_t slot = 0);

// A region that touches only memory `device` owns: a fill of `scratch` when the device
// holds memory (allocated into `scratch`), else an empty run, which is all a device
// without memory can be given.
std::unique_ptr<NativeRegion> simple_region(Device& device, std::unique_ptr<DeviceMemory>& scratch,
                                           std::uint32_t slots = 1);

// The bytes of `memory` as the host sees them: read directly when it is host mapped,
// else copied into admitted host pages on the device's Download (or work) lane.
std::vector<std::uint8_t> read_back(Device& device, const DeviceMemory& memory);

// Counts operator new calls made on the calling thread while alive (the suite's
// executable replaces the global allocation functions). Not nestable. Owner thread
// only: it counts the thread that created it.
class AllocationCounter {
 public:
  AllocationCounter() noexcept;
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  // Allocations so far on this thread since construction.
  std::uint64_t count() const noexcept;
};

std::vector<std::uint8_t> bytes_of_float(float value);
float float_of_bytes(std::uint8_t byte);  // a float whose four bytes are all `byte`

}  // namespace accord::devices::conformance
