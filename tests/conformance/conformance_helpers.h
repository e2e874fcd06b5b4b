// Shared helpers of the API conformance suite: Status matchers and assertion macros,
// runtime creation with self-explaining skips, host-side buffer access, and loaders for
// the test plugin's kernels. Public API only (accord/accord.h), so every transport runs it.
#pragma once

#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accord/accord.h"
#include "tests/conformance/conformance_runtime.h"
#include "tests/support/catch_accord_strings.h"

#ifndef ACCORD_TEST_PLUGIN_PATH
#define ACCORD_TEST_PLUGIN_PATH ""
#endif
#ifndef ACCORD_TEST_PLUGIN_BADSAN_PATH
#define ACCORD_TEST_PLUGIN_BADSAN_PATH ""
#endif

// ---------------------------------------------------------------------------------
// Printing accord types in Catch2 messages (the vocabulary ones: tests/support/catch_accord_strings.h).

namespace Catch {
template <>
struct StringMaker<accord::Node> {
  static std::string convert(accord::Node node) { return "node " + std::to_string(node.index); }
};
}  // namespace Catch

namespace accord::conformance {

// ---------------------------------------------------------------------------------
// Status matchers.

inline const Status& status_of(const Status& status) { return status; }
template <class T>
const Status& status_of(const Result<T>& result) {
  return result.status();
}

class IsOkMatcher : public Catch::MatcherBase<Status> {
 public:
  bool match(const Status& status) const override { return status.ok(); }
  std::string describe() const override { return "is OK"; }
};
inline IsOkMatcher IsOk() { return {}; }

// Fails with `kind`, and (when `fragments` is not empty) a message containing at least
// one of `fragments`, compared case-insensitively.
class FailsWithMatcher : public Catch::MatcherBase<Status> {
 public:
  FailsWithMatcher(ErrorKind kind, std::vector<std::string> fragments)
      : kind_(kind), fragments_(std::move(fragments)) {}

  bool match(const Status& status) const override {
    if (status.ok() || status.kind() != kind_) return false;
    if (fragments_.empty()) return true;
    const std::string message = lower(std::string(status.message()));
    for (const std::string& f : fragments_) {
      if (message.find(lower(f)) != std::string::npos) return true;
    }
    return false;
  }
  std::string describe() const override {
    std::string d = "fails with " + std::string(to_string(kind_));
    if (!fragments_.empty()) {
      d += " and a message containing";
      for (std::size_t i = 0; i < fragments_.size(); ++i)
        d += (i == 0 ? " \"" : " or \"") + fragments_[i] + "\"";
    }
    return d;
  }

 private:
  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  ErrorKind kind_;
  std::vector<std::string> fragments_;
};
inline FailsWithMatcher FailsWith(ErrorKind kind, std::vector<std::string> fragments = {}) {
  return FailsWithMatcher(kind, std::move(fragments));
}

// Any failure at all (for outcomes whose kind the design leaves open), optionally with
// a message containing one of `fragments` (case-insensitive).
class FailsMatcher : public Catch::MatcherBase<Status> {
 public:
  explicit FailsMatcher(std::vector<std::string> fragments = {}) : fragments_(std::move(fragments)) {}
  bool match(const Status& status) const override {
    if (status.ok()) return false;
    return fragments_.empty() || FailsWithMatcher(status.kind(), fragments_).match(status);
  }
  std::string describe() const override {
    std::string d = "fails";
    for (std::size_t i = 0; i < fragments_.size(); ++i)
      d += (i == 0 ? " with a message containing \"" : " or \"") + fragments_[i] + "\"";
    return d;
  }

 private:
  std::vector<std::string> fragments_;
};
inline FailsMatcher Fails(std::vector<std::string> fragments = {}) { return FailsMatcher(std::move(fragments)); }

}  // namespace accord::conformance

// The expression may contain commas (braced lists): the macros are variadic.
#define REQUIRE_OK(...) \
  REQUIRE_THAT(::accord::conformance::status_of(__VA_ARGS__), ::accord::conformance::IsOk())
#define CHECK_OK(...) \
  CHECK_THAT(::accord::conformance::status_of(__VA_ARGS__), ::accord::conformance::IsOk())
#define REQUIRE_FAILS_WITH(kind, ...)                                \
  REQUIRE_THAT(::accord::conformance::status_of(__VA_ARGS__),        \
               ::accord::conformance::FailsWith(::accord::ErrorKind::kind))
#define CHECK_FAILS_WITH(kind, ...)                                  \
  CHECK_THAT(::accord::conformance::status_of(__VA_ARGS__),          \
             ::accord::conformance::FailsWith(::accord::ErrorKind::kind))

// Matches the Status of a Status- or Result-valued expression against a matcher:
// CHECK_STATUS(g.fill(v, 1), FailsWith(ErrorKind::Invalid, {"runtime"})).
#define CHECK_STATUS(expr, matcher) CHECK_THAT(::accord::conformance::status_of(expr), matcher)
#define REQUIRE_STATUS(expr, matcher) REQUIRE_THAT(::accord::conformance::status_of(expr), matcher)

// Evaluates a Result<T>-valued expression, REQUIREs it to be OK and yields the value.
#define UNWRAP(...)                                                              \
  ([&]() {                                                                       \
    auto accord_unwrap_result_ = (__VA_ARGS__);                                  \
    INFO("UNWRAP(" #__VA_ARGS__ ")");                                            \
    REQUIRE_THAT(::accord::conformance::status_of(accord_unwrap_result_),        \
                 ::accord::conformance::IsOk());                                 \
    return std::move(accord_unwrap_result_).value();                             \
  }())

namespace accord::conformance {
// The reason this transport lists the running test case as a known gap, or null.
inline const char* known_gap_reason() {
  const std::string name = Catch::getResultCapture().getCurrentTestName();
  for (const ConformanceGap& gap : conformance_known_gaps()) {
    if (name == gap.test_name) return gap.reason;
  }
  return nullptr;
}
}  // namespace accord::conformance

// Declares `Runtime name` over this executable's transport. The test case ends early
// with a WARN that says why when the transport lists it as a known gap, or when the
// transport is not available here (Unsupported): Catch2 v2 has no skip, so the message
// is the record that nothing was checked.
#define CONFORMANCE_RUNTIME(name, ...)                                                   \
  if (const char* name##_gap_ = ::accord::conformance::known_gap_reason()) {             \
    WARN("skipped: a known gap of the '" << ::conformance_transport_name()               \
                                         << "' transport: " << name##_gap_);             \
    return;                                                                              \
  }                                                                                      \
  auto name##_created_ = ::make_conformance_runtime(__VA_ARGS__);                        \
  if (!name##_created_.ok() && name##_created_.status().kind() == ::accord::ErrorKind::Unsupported) { \
    WARN("skipped: transport '" << ::conformance_transport_name()                        \
                                << "' is not available here: " << name##_created_.status().message()); \
    return;                                                                              \
  }                                                                                      \
  REQUIRE_OK(name##_created_);                                                           \
  ::accord::Runtime name = std::move(name##_created_).value()

namespace accord::conformance {

// ---------------------------------------------------------------------------------
// Options and timing.

inline RuntimeOptions with_workers(std::size_t workers) {
  RuntimeOptions options;
  options.worker_threads = workers;
  return options;
}

// Long enough that work queued behind it is certainly still pending a few statements
// later, short enough to keep the suite quick. Ordering is always proven through data
// (the marker below), never by measuring time.
inline constexpr std::uint32_t kLongSleepUs = 300'000;

// Polls `condition` until it holds or `limit` passes; true if it held. For effects the
// design allows to trail a completion by a little (memory released by a worker).
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::milliseconds(10'000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Host access to buffers (blocking leases).

inline Buffer make_buffer(const Runtime& runtime, std::size_t bytes) {
  auto buffer = runtime.allocate(bytes, MemoryPlacement::host_visible());
  INFO("allocating " << bytes << " host-visible bytes");
  REQUIRE_OK(buffer);
  return std::move(buffer).value();
}

inline BufferView slice_of(const Buffer& buffer, std::size_t begin, std::size_t end) {
  auto view = buffer.slice(begin, end);
  INFO("slicing [" << begin << ", " << end << ") of a " << buffer.size() << "-byte buffer");
  REQUIRE_OK(view);
  return std::move(view).value();
}

inline std::vector<std::uint8_t> read_bytes(const Buffer& buffer) {
  auto guard = buffer.map_read();
  REQUIRE_OK(guard);
  const auto bytes = guard->bytes();
  std::vector<std::uint8_t> out(bytes.size());
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

inline void write_bytes(const Buffer& buffer, const std::vector<std::uint8_t>& bytes) {
  auto guard = buffer.map_write();
  REQUIRE_OK(guard);
  REQUIRE(guard->size() == bytes.size());
  if (!bytes.empty()) std::memcpy(guard->data(), bytes.data(), bytes.size());
}

inline void fill_on_host(const Buffer& buffer, std::uint8_t value) {
  write_bytes(buffer, std::vector<std::uint8_t>(buffer.size(), value));
}

inline std::vector<float> read_floats(const Buffer& buffer) {
  const std::vector<std::uint8_t> bytes = read_bytes(buffer);
  std::vector<float> out(bytes.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

inline void write_floats(const Buffer& buffer, const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  write_bytes(buffer, bytes);
}

inline std::vector<std::uint8_t> repeated(std::size_t count, std::uint8_t value) {
  return std::vector<std::uint8_t>(count, value);
}

inline std::uint32_t u32_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint32_t v = 0;
  REQUIRE(offset + sizeof(v) <= bytes.size());
  std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

inline std::vector<std::uint8_t> subrange(const std::vector<std::uint8_t>& bytes, std::size_t begin,
                                          std::size_t end) {
  return std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                                   bytes.begin() + static_cast<std::ptrdiff_t>(end));
}

// ---------------------------------------------------------------------------------
// The test plugin (tests/plugins/test_plugin.c): test.scale_f32, test.fail, test.sleep_us.

// test.sleep_us writes this to the first 4 bytes of its binding once it has slept.
inline constexpr std::uint32_t kSleepMarker = 0x5EE9D0E5u;

inline std::string plugin_path() {
  const std::string path = ACCORD_TEST_PLUGIN_PATH;
  INFO("ACCORD_TEST_PLUGIN_PATH is empty: tests/plugins did not define accord_test_plugin");
  REQUIRE_FALSE(path.empty());
  return path;
}

// out[i] = in[i] * factor for i < count. Bindings: in (Read), out (Write), f32[count].
inline KernelContract scale_contract(std::uint32_t count, float factor) {
  KernelContract c;
  c.bindings = {BindingContract{count * sizeof(float), 4, Access::Read, "in"},
                BindingContract{count * sizeof(float), 4, Access::Write, "out"}};
  append_constant(c.constants, factor);
  append_constant(c.constants, count);
  return c;
}
// Always fails with "injected failure". One ReadWrite binding of at least `bytes`.
inline KernelContract fail_contract(std::size_t bytes = 4) {
  KernelContract c;
  c.bindings = {BindingContract{bytes, 4, Access::ReadWrite, "victim"}};
  return c;
}
// Sleeps `microseconds`, then writes kSleepMarker to the first 4 bytes of its binding.
inline KernelContract sleep_contract(std::uint32_t microseconds, std::size_t bytes = 4) {
  KernelContract c;
  c.bindings = {BindingContract{bytes, 4, Access::ReadWrite, "marker"}};
  append_constant(c.constants, microseconds);
  return c;
}

inline Kernel load_plugin(const Runtime& runtime, const std::string& name, const KernelContract& contract) {
  auto kernel = runtime.load_plugin_kernel(plugin_path(), name, contract);
  INFO("loading plugin kernel " << name << " from " << ACCORD_TEST_PLUGIN_PATH);
  REQUIRE_OK(kernel);
  return std::move(kernel).value();
}
inline Kernel load_scale(const Runtime& runtime, std::uint32_t count, float factor) {
  return load_plugin(runtime, "test.scale_f32", scale_contract(count, factor));
}
inline Kernel load_fail(const Runtime& runtime, std::size_t bytes = 4) {
  return load_plugin(runtime, "test.fail", fail_contract(bytes));
}
inline Kernel load_sleep(const Runtime& runtime, std::uint32_t microseconds) {
  return load_plugin(runtime, "test.sleep_us", sleep_contract(microseconds));
}

inline Kernel load_builtin(const Runtime& runtime, const builtin::KernelSpec& spec) {
  auto kernel = runtime.load_kernel(spec);
  INFO("loading built-in kernel " << spec.name);
  REQUIRE_OK(kernel);
  return std::move(kernel).value();
}

// ---------------------------------------------------------------------------------
// Graphs.

inline ExecutableGraph prepare(Graph&& graph) {
  auto exec = std::move(graph).prepare();
  REQUIRE_OK(exec);
  return std::move(exec).value();
}

// Submits once and waits for success.
inline void run_once(const ExecutableGraph& exec) {
  auto completion = exec.submit();
  REQUIRE_OK(completion);
  REQUIRE_OK(completion->wait());
}

// A one-node graph: sleeps `microseconds` on the Host lane, then writes kSleepMarker to
// the first 4 bytes of `target` (a ReadWrite use of the whole view).
inline ExecutableGraph sleep_graph(const Runtime& runtime, const BufferView& target,
                                   std::uint32_t microseconds = kLongSleepUs) {
  const Kernel sleeper = load_sleep(runtime, microseconds);
  Graph graph = runtime.graph();
  REQUIRE_OK(graph.host(sleeper, {target}));
  return prepare(std::move(graph));
}

// A one-node graph that fills `target` with `value`.
inline ExecutableGraph fill_graph(const Runtime& runtime, const BufferView& target, std::uint8_t value) {
  Graph graph = runtime.graph();
  REQUIRE_OK(graph.fill(target, value));
  return prepare(std::move(graph));
}

// A one-node graph that copies `source` to `destination`.
inline ExecutableGraph copy_graph(const Runtime& runtime, const BufferView& destination,
                                  const BufferView& source) {
  Graph graph = runtime.graph();
  REQUIRE_OK(graph.copy(destination, source));
  return prepare(std::move(graph));
}

inline std::vector<std::uint32_t> deps_of(const ExecutableGraph& exec, Node node) {
  std::vector<std::uint32_t> out;
  for (Node n : exec.dependencies(node)) out.push_back(n.index);
  return out;
}

inline std::vector<std::uint32_t> indices(std::initializer_list<Node> nodes) {
  std::vector<std::uint32_t> out;
  for (Node n : nodes) out.push_back(n.index);
  return out;
}

inline std::vector<std::uint32_t> region_nodes(const ExecutableGraph& exec, std::size_t region) {
  std::vector<std::uint32_t> out;
  for (Node n : exec.region(region).nodes) out.push_back(n.index);
  return out;
}

}  // namespace accord::conformance
