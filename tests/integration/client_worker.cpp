// accord_integration_client: a real client process of accordd for the integration tests.
// It uses only the public API (accord/accord.h) over Runtime::connect.
//
//   work  SOCKET SEED ITERATIONS [START_FILE]
//                                  a seed-dependent pipeline (fill, copies, add, saxpy,
//                                  relu, matmul) submitted ITERATIONS times, with new
//                                  inputs each time; every result is checked against a
//                                  CPU reference. Exit 0 only if all were right. With
//                                  START_FILE: prints "prepared" once connected and
//                                  prepared, then waits (at most 60 s) for that file to
//                                  exist before the first submission, so that a test
//                                  can start many clients' work at once.
//   hold  SOCKET BYTES [SECONDS]   allocates BYTES, submits two runs of copies over
//                                  them, each about SECONDS long (default 1.5), holds a
//                                  write lease on a second buffer, prints "ready" and
//                                  sleeps until killed.
//   probe SOCKET                   connects and prints the outcome: exit 0 connected (and
//                                  a small fill round trip worked), 3 refused (Unsupported,
//                                  the daemon's uid check), 4 any other connect error,
//                                  5 the session did not work.
// Exit 1: a failure in work/hold (one line each on stdout); 2: usage.
#include <unistd.h>

#include <accord/accord.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRefused = 3;
constexpr int kExitConnectError = 4;
constexpr int kExitSessionBroken = 5;

// Prints the failure and returns kExitFailed, so callers can `return fail(...)`.
int fail(const char* what, const accord::Status& status) {
  std::printf("FAIL %s: %s\n", what, status.to_string().c_str());
  std::fflush(stdout);
  return kExitFailed;
}

// As fail(), for probe: the session connected but did not work.
int broken(const char* what, const accord::Status& status) {
  fail(what, status);
  return kExitSessionBroken;
}

bool parse_u64(const char* text, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  out = v;
  return true;
}

// --- work ---

// 64 x 64 f32 values: a vector for the element-wise kernels, a matrix for matmul.
constexpr std::uint32_t kSide = 64;
constexpr std::uint32_t kCount = kSide * kSide;
constexpr std::size_t kVectorBytes = kCount * sizeof(float);

// A small deterministic generator (splitmix64), so every process and iteration has its
// own inputs.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Integers in [-8, 8] as floats: every sum and product below is exact in f32 (at most
// 64 * 40 * 8 in magnitude), so results compare exactly whatever the summation order.
float small_int(std::uint64_t seed, std::uint64_t iteration, std::uint64_t index) {
  const std::uint64_t r = mix(seed * 0x100000001B3ull ^ mix(iteration * 131 + index));
  return static_cast<float>(static_cast<int>(r % 17) - 8);
}

struct Reference {
  std::vector<float> relu;     // max(alpha * a + (a + b), 0)
  std::vector<float> product;  // relu x B, B = b as a 64 x 64 row-major matrix
};

Reference reference(const std::vector<float>& a, const std::vector<float>& b, float alpha) {
  Reference r;
  r.relu.resize(kCount);
  r.product.assign(kCount, 0.0f);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const float s = alpha * a[i] + (a[i] + b[i]);
    r.relu[i] = s > 0 ? s : 0.0f;
  }
  for (std::uint32_t row = 0; row < kSide; ++row)
    for (std::uint32_t col = 0; col < kSide; ++col) {
      float sum = 0;
      for (std::uint32_t k = 0; k < kSide; ++k) sum += r.relu[row * kSide + k] * b[k * kSide + col];
      r.product[row * kSide + col] = sum;
    }
  return r;
}

#define WORK_TRY(var, expr, what)        \
  auto var##_result = (expr);            \
  if (!var##_result.ok()) return fail(what, var##_result.status()); \
  auto var = std::move(var##_result).value()

// Waits for `path` to exist; false after 60 s.
bool wait_for_file(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

int run_work(const std::string& socket, std::uint64_t seed, std::uint64_t iterations, const char* start_file) {
  WORK_TRY(runtime, accord::Runtime::connect(socket), "connect");
  const float alpha = static_cast<float>(2 + seed % 3);  // 2, 3 or 4

  // inputs: a | b. scratch: c | s | r | p. results: relu | product | sentinel.
  WORK_TRY(inputs, runtime.allocate(2 * kVectorBytes), "allocate inputs");
  WORK_TRY(scratch, runtime.allocate(4 * kVectorBytes), "allocate scratch");
  WORK_TRY(results, runtime.allocate(3 * kVectorBytes), "allocate results");
  auto view = [](const accord::Buffer& buffer, std::size_t index) {
    return buffer.slice(index * kVectorBytes, (index + 1) * kVectorBytes).value();
  };
  const accord::BufferView a = view(inputs, 0), b = view(inputs, 1);
  const accord::BufferView c = view(scratch, 0), s = view(scratch, 1), r = view(scratch, 2), p = view(scratch, 3);
  const accord::BufferView out_relu = view(results, 0), out_product = view(results, 1), sentinel = view(results, 2);

  WORK_TRY(add, runtime.load_kernel(accord::builtin::add_f32(kCount)), "load add_f32");
  WORK_TRY(saxpy, runtime.load_kernel(accord::builtin::saxpy_f32(kCount, alpha)), "load saxpy_f32");
  WORK_TRY(relu, runtime.load_kernel(accord::builtin::relu_f32(kCount)), "load relu_f32");
  WORK_TRY(matmul, runtime.load_kernel(accord::builtin::matmul_f32(kSide, kSide, kSide)), "load matmul_f32");

  // The fills clear last iteration's results first, so a run that silently did nothing
  // cannot pass on stale bytes.
  const std::uint8_t sentinel_byte = static_cast<std::uint8_t>(0x40 + seed % 32);
  accord::Graph graph = runtime.graph();
  const accord::Status recorded = [&]() -> accord::Status {
    ACCORD_RETURN_IF_ERROR(graph.fill(results.view(), 0).status());
    ACCORD_RETURN_IF_ERROR(graph.fill(sentinel, sentinel_byte).status());
    ACCORD_RETURN_IF_ERROR(graph.copy(c, a).status());
    ACCORD_RETURN_IF_ERROR(graph.host(add, {a, b, s}).status());      // s = a + b
    ACCORD_RETURN_IF_ERROR(graph.host(saxpy, {c, s}).status());       // s = alpha * c + s
    ACCORD_RETURN_IF_ERROR(graph.host(relu, {s, r}).status());        // r = max(s, 0)
    ACCORD_RETURN_IF_ERROR(graph.host(matmul, {r, b, p}).status());   // p = r x B
    ACCORD_RETURN_IF_ERROR(graph.copy(out_relu, r).status());
    ACCORD_RETURN_IF_ERROR(graph.copy(out_product, p).status());
    return accord::Status();
  }();
  if (!recorded.ok()) return fail("record", recorded);
  WORK_TRY(executable, std::move(graph).prepare(), "prepare");
  if (start_file != nullptr) {
    std::printf("prepared\n");
    std::fflush(stdout);
    if (!wait_for_file(start_file)) {
      std::printf("FAIL seed %" PRIu64 ": %s did not appear within 60 s\n", seed, start_file);
      return kExitFailed;
    }
  }

  std::uint64_t failures = 0;
  std::vector<float> host_a(kCount), host_b(kCount);
  for (std::uint64_t it = 0; it < iterations; ++it) {
    for (std::uint32_t i = 0; i < kCount; ++i) {
      host_a[i] = small_int(seed, it, i);
      host_b[i] = small_int(seed, it, kCount + i);
    }
    {
      WORK_TRY(guard, inputs.map_write(), "map_write inputs");
      float* f = guard.as<float>().data();
      std::memcpy(f, host_a.data(), kVectorBytes);
      std::memcpy(f + kCount, host_b.data(), kVectorBytes);
    }  // releasing the WriteGuard publishes the inputs
    WORK_TRY(done, executable.submit(), "submit");
    if (accord::Status st = done.wait(); !st.ok()) return fail("wait", st);
    if (auto result = done.result(); !result || !result->ok())
      return fail("completion result", result ? *result : accord::internal_error("no result after wait"));

    const Reference expected = reference(host_a, host_b, alpha);
    WORK_TRY(guard, results.map_read(), "map_read results");
    const std::span<const float> got = guard.as<float>();
    std::uint64_t wrong = 0;
    auto check = [&](const char* name, std::size_t base, const std::vector<float>& want) {
      for (std::uint32_t i = 0; i < kCount; ++i) {
        if (got[base + i] == want[i]) continue;
        if (++wrong <= 4)
          std::printf("FAIL seed %" PRIu64 " iteration %" PRIu64 ": %s[%u] = %g, expected %g\n", seed, it, name, i,
                      static_cast<double>(got[base + i]), static_cast<double>(want[i]));
      }
    };
    check("relu", 0, expected.relu);
    check("product", kCount, expected.product);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(got.data()) + 2 * kVectorBytes;
    for (std::size_t i = 0; i < kVectorBytes; ++i) {
      if (bytes[i] == sentinel_byte) continue;
      if (++wrong <= 4)
        std::printf("FAIL seed %" PRIu64 " iteration %" PRIu64 ": sentinel byte %zu = 0x%02x, expected 0x%02x\n", seed,
                    it, i, bytes[i], sentinel_byte);
    }
    if (wrong) {
      std::printf("FAIL seed %" PRIu64 " iteration %" PRIu64 ": %" PRIu64 " wrong values\n", seed, it, wrong);
      ++failures;
    }
  }

  const accord::Statistics stats = runtime.statistics();
  if (stats.submissions != iterations || stats.completions != iterations) {
    std::printf("FAIL seed %" PRIu64 ": session statistics show %" PRIu64 " submissions and %" PRIu64
                " completions, expected %" PRIu64 " of each\n",
                seed, stats.submissions, stats.completions,
                iterations);
    ++failures;
  }
  std::printf("work seed %" PRIu64 ": %" PRIu64 " iterations, %" PRIu64 " failed\n", seed, iterations, failures);
  std::fflush(stdout);
  return failures == 0 ? kExitOk : kExitFailed;
}

// --- hold ---

int run_hold(const std::string& socket, std::uint64_t bytes, double seconds) {
  if (bytes < 2 * 4096 || bytes % 8 != 0) {
    std::printf("hold: BYTES must be a multiple of 8 and at least 8192\n");
    return kExitUsage;
  }
  WORK_TRY(runtime, accord::Runtime::connect(socket), "connect");
  WORK_TRY(big, runtime.allocate(bytes), "allocate");
  WORK_TRY(leased, runtime.allocate(4096), "allocate leased");
  const std::size_t half = bytes / 2;
  const accord::BufferView low = big.slice(0, half).value(), high = big.slice(half, 2 * half).value();

  // A chain of copies back and forth: each depends on the one before (RAW/WAR), so they
  // run one after another. A short chain, timed, sizes the real one at about `seconds`
  // of this machine's copying, whatever its memory bandwidth.
  auto chain = [&](std::size_t copies) -> accord::Result<accord::ExecutableGraph> {
    accord::Graph graph = runtime.graph();
    for (std::size_t i = 0; i < copies; ++i)
      ACCORD_RETURN_IF_ERROR(((i % 2 == 0) ? graph.copy(high, low) : graph.copy(low, high)).status());
    return std::move(graph).prepare();
  };
  // Timed twice: the first run also pays for faulting in the fresh pages.
  constexpr std::size_t kCalibrationCopies = 8;
  WORK_TRY(calibration, chain(kCalibrationCopies), "prepare calibration");
  double per_copy_s = 0;
  for (int run = 0; run < 2; ++run) {
    const auto started = std::chrono::steady_clock::now();
    WORK_TRY(calibrated, calibration.submit(), "submit calibration");
    if (accord::Status st = calibrated.wait(); !st.ok()) return fail("wait calibration", st);
    per_copy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / kCalibrationCopies;
  }
  const std::size_t copies = std::clamp<std::size_t>(static_cast<std::size_t>(seconds / std::max(per_copy_s, 1e-6)), 16, 20000);
  WORK_TRY(executable, chain(copies), "prepare");
  WORK_TRY(first, executable.submit(), "submit");
  WORK_TRY(second, executable.submit(), "submit again");  // queued behind the first (WAW)
  // A live write lease too: the session's death must release it along with the memory.
  WORK_TRY(lease, leased.map_write(), "map_write");
  lease.as<std::uint32_t>()[0] = 0xA11CE;

  std::printf("ready: %" PRIu64 " bytes, 2 submissions of %zu copies of %zu bytes in flight (%.1f ms a copy)\n",
              bytes, copies, half, per_copy_s * 1e3);
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(60));
}

// --- probe ---

int run_probe(const std::string& socket) {
  auto runtime = accord::Runtime::connect(socket);
  if (!runtime.ok()) {
    const accord::Status& st = runtime.status();
    std::printf("refused uid %u: %s: %s\n", static_cast<unsigned>(getuid()),
                std::string(accord::to_string(st.kind())).c_str(), std::string(st.message()).c_str());
    std::fflush(stdout);
    return st.kind() == accord::ErrorKind::Unsupported ? kExitRefused : kExitConnectError;
  }
  std::printf("connected uid %u\n", static_cast<unsigned>(getuid()));
  // The session works: a fill round trip through shared memory.
  auto buffer = runtime->allocate(4096);
  if (!buffer.ok()) return broken("allocate", buffer.status());
  accord::Graph graph = runtime->graph();
  if (auto n = graph.fill(buffer->view(), 0x5A); !n.ok()) return broken("fill", n.status());
  auto executable = std::move(graph).prepare();
  if (!executable.ok()) return broken("prepare", executable.status());
  auto done = executable->submit();
  if (!done.ok()) return broken("submit", done.status());
  if (accord::Status st = done->wait(); !st.ok()) return broken("wait", st);
  auto guard = buffer->map_read();
  if (!guard.ok()) return broken("map_read", guard.status());
  for (std::byte b : guard->bytes()) {
    if (b != std::byte{0x5A}) {
      std::printf("FAIL probe: the filled buffer does not hold 0x5A\n");
      return kExitSessionBroken;
    }
  }
  std::printf("session works\n");
  return kExitOk;
}

int usage() {
  std::fprintf(stderr,
               "usage: accord_integration_client work SOCKET SEED ITERATIONS [START_FILE]\n"
               "       accord_integration_client hold SOCKET BYTES [SECONDS]\n"
               "       accord_integration_client probe SOCKET\n");
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  const std::string socket = argv[2];
  if (mode == "work" && (argc == 5 || argc == 6)) {
    std::uint64_t seed = 0, iterations = 0;
    if (!parse_u64(argv[3], seed) || !parse_u64(argv[4], iterations)) return usage();
    return run_work(socket, seed, iterations, argc == 6 ? argv[5] : nullptr);
  }
  if (mode == "hold" && (argc == 4 || argc == 5)) {
    std::uint64_t bytes = 0;
    if (!parse_u64(argv[3], bytes)) return usage();
    double seconds = 1.5;
    if (argc == 5) {
      char* end = nullptr;
      seconds = std::strtod(argv[4], &end);
      if (end == argv[4] || *end != '\0' || !(seconds > 0 && seconds <= 60)) return usage();
    }
    return run_hold(socket, bytes, seconds);
  }
  if (mode == "probe" && argc == 3) return run_probe(socket);
  return usage();
}
