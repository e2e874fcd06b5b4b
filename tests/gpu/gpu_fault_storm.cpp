// gpu_fault_storm: issue 10's acceptance run. A real accordd (its GPU driven by executor
// processes) serves, for --seconds (default 60):
//   - a faulting tenant that submits a kernel writing through a wild pointer every 2 s;
//   - three innocent tenants running random verified graphs (fills, copies and add_f32
//     over host and GPU buffers, checked against serial execution on the CPU) on the
//     same GPU, through the shared executor;
//   - one isolated tenant (another uid, listed in --gpu-isolation) running the same
//     verified graphs through an executor of its own.
// It checks that accordd never exits, that every result reported successful is right,
// that the innocent tenants fail only with DeviceLost or Execution and only around a
// fault, and that the isolated tenant never fails; it reports how long the GPU took to
// come back after each fault, from accordd's log (loss to "back in service").
// Needs root (the isolated tenant runs as uid 65534) and a GPU; exits 77 (skipped) with
// the reason otherwise.
//   gpu_fault_storm [--seconds N]
//   gpu_fault_storm --tenant SOCKET SECONDS SEED      (the isolated tenant, internal)
#include <unistd.h>

#include <accord/accord.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/process_support.h"

extern const unsigned char accord_gpu_test_ptx[];
extern const unsigned long accord_gpu_test_ptx_size;

namespace {

using namespace accord;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kSkipped = 77;
constexpr std::size_t kFloats = 64;
constexpr std::size_t kBufferBytes = kFloats * sizeof(float);
constexpr std::uint32_t kKernelFloats = 16;
constexpr std::size_t kKernelBytes = kKernelFloats * sizeof(float);
constexpr uid_t kIsolatedUid = 65534;  // nobody

std::vector<std::byte> ptx() {
  std::vector<std::byte> out(reinterpret_cast<const std::byte*>(accord_gpu_test_ptx),
                             reinterpret_cast<const std::byte*>(accord_gpu_test_ptx) + accord_gpu_test_ptx_size);
  out.push_back(std::byte{0});
  return out;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What one tenant saw.
struct TenantReport {
  std::string name;
  std::uint64_t graphs_ok = 0;     // graphs whose results were checked and right
  std::uint64_t wrong = 0;         // results reported successful but wrong: never allowed
  std::uint64_t device_lost = 0;   // failures by kind
  std::uint64_t execution = 0;
  std::uint64_t other = 0;         // any other kind: never allowed
  std::vector<double> failure_times;  // seconds since the start
  std::vector<std::string> notes;     // the first few failure messages
  double longest_outage = 0;          // seconds from a failure until work ran again

  void fail(const Status& status, Clock::time_point t0) {
    if (status.kind() == ErrorKind::DeviceLost) ++device_lost;
    else if (status.kind() == ErrorKind::Execution) ++execution;
    else ++other;
    failure_times.push_back(seconds_since(t0));
    if (notes.size() < 3) notes.push_back(status.to_string());
  }
};

// The GPU objects of a tenant, remade after a loss: everything made on the GPU before
// a fault is DeviceLost afterwards.
struct TenantObjects {
  Kernel add;
  std::array<Buffer, 4> buffers;  // 0, 1: HostVisible; 2, 3: GpuLocal(0)
  Buffer readback;
  ExecutableGraph read_gpu;
};

Result<TenantObjects> make_objects(const Runtime& rt) {
  GpuKernelImage image;
  image.image = ptx();
  image.entry = "accord_gpu_add_f32";
  image.grid = {1, 1, 1};
  image.block = {256, 1, 1};
  KernelContract contract;
  contract.bindings = {{kKernelBytes, 4, Access::Read, "f32 a"}, {kKernelBytes, 4, Access::Read, "f32 b"},
                       {kKernelBytes, 4, Access::Write, "f32 out"}};
  append_constant(contract.constants, kKernelFloats);
  ACCORD_ASSIGN_OR_RETURN(Kernel add, rt.load_gpu_kernel(0, image, contract));
  ACCORD_ASSIGN_OR_RETURN(Buffer h0, rt.allocate(kBufferBytes, MemoryPlacement::host_visible()));
  ACCORD_ASSIGN_OR_RETURN(Buffer h1, rt.allocate(kBufferBytes, MemoryPlacement::host_visible()));
  ACCORD_ASSIGN_OR_RETURN(Buffer g0, rt.allocate(kBufferBytes, MemoryPlacement::gpu_local(0)));
  ACCORD_ASSIGN_OR_RETURN(Buffer g1, rt.allocate(kBufferBytes, MemoryPlacement::gpu_local(0)));
  ACCORD_ASSIGN_OR_RETURN(Buffer readback, rt.allocate(2 * kBufferBytes, MemoryPlacement::host_visible()));
  Graph download = rt.graph();
  ACCORD_ASSIGN_OR_RETURN(BufferView r0, readback.slice(0, kBufferBytes));
  ACCORD_ASSIGN_OR_RETURN(BufferView r1, readback.slice(kBufferBytes, 2 * kBufferBytes));
  ACCORD_RETURN_IF_ERROR(download.copy(r0, g0.view()).status());
  ACCORD_RETURN_IF_ERROR(download.copy(r1, g1.view()).status());
  ACCORD_ASSIGN_OR_RETURN(ExecutableGraph read_gpu, std::move(download).prepare());
  return TenantObjects{std::move(add), {std::move(h0), std::move(h1), std::move(g0), std::move(g1)},
                       std::move(readback), std::move(read_gpu)};
}

Result<std::vector<std::uint8_t>> read_all(const Buffer& buffer) {
  ACCORD_ASSIGN_OR_RETURN(ReadGuard guard, buffer.map_read());
  const auto* p = reinterpret_cast<const std::uint8_t*>(guard.data());
  return std::vector<std::uint8_t>(p, p + guard.size());
}

Status write_all(const Buffer& buffer, const std::vector<std::uint8_t>& bytes) {
  ACCORD_ASSIGN_OR_RETURN(WriteGuard guard, buffer.map_write());
  std::memcpy(guard.data(), bytes.data(), std::min(bytes.size(), guard.size()));
  return Status();
}

// Random verified graphs until `deadline` (the [gpu][random] case's generator): after
// each, every buffer must hold what serial execution on the CPU gives.
class VerifiedTenant {
 public:
  VerifiedTenant(Runtime& rt, std::string name, std::uint32_t seed) : rt_(rt), rng_(seed) { report_.name = std::move(name); }

  TenantReport run(Clock::time_point t0, Clock::time_point deadline) {
    while (Clock::now() < deadline) {
      if (!objects_ && !remake(t0, deadline)) break;
      if (Status s = one_graph(); !s.ok()) {
        report_.fail(s, t0);
        objects_.reset();  // the GPU's memory is gone, or in an unknown state
      }
    }
    return report_;
  }

 private:
  struct Range {
    int buffer = 0;
    std::size_t offset = 0;
    std::size_t length = 0;
  };

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Range random_range(std::size_t floats, int first, int last) {
    return {pick(first, last), static_cast<std::size_t>(pick(0, static_cast<int>(kFloats - floats))) * sizeof(float),
            floats * sizeof(float)};
  }
  static bool overlap(const Range& a, const Range& b) {
    return a.buffer == b.buffer && a.offset < b.offset + b.length && b.offset < a.offset + a.length;
  }

  // Remakes the tenant's objects, retrying while the GPU is coming back.
  bool remake(Clock::time_point t0, Clock::time_point deadline) {
    const auto start = Clock::now();
    for (;;) {
      auto made = make_objects(rt_);
      if (made.ok()) {
        objects_ = std::move(made).value();
        for (auto& m : model_) m.assign(kBufferBytes, 0);  // new memory is zeroed
        if (!report_.failure_times.empty())
          report_.longest_outage = std::max(report_.longest_outage, std::chrono::duration<double>(Clock::now() - start).count());
        return true;
      }
      if (made.status().kind() != ErrorKind::DeviceLost) report_.fail(made.status(), t0);
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
  }

  Status one_graph() {
    TenantObjects& o = *objects_;
    auto view_of = [&](const Range& r) {
      return o.buffers[static_cast<std::size_t>(r.buffer)].slice(r.offset, r.offset + r.length).value();
    };
    for (int b = 0; b < 2; ++b) {
      std::vector<float> values(kFloats);
      for (float& v : values) v = static_cast<float>(pick(0, 1 << 20)) / 1024.0f;
      std::memcpy(model_[static_cast<std::size_t>(b)].data(), values.data(), kBufferBytes);
      ACCORD_RETURN_IF_ERROR(write_all(o.buffers[static_cast<std::size_t>(b)], model_[static_cast<std::size_t>(b)]));
    }
    Graph g = rt_.graph();
    const int count = pick(1, 6);
    for (int op = 0; op < count; ++op) {
      switch (pick(0, 2)) {
        case 0: {
          const Range r = random_range(static_cast<std::size_t>(pick(1, static_cast<int>(kFloats))), 0, 3);
          const auto value = static_cast<std::uint8_t>(pick(0, 0x7e));
          ACCORD_RETURN_IF_ERROR(g.fill(view_of(r), value).status());
          std::memset(model_[static_cast<std::size_t>(r.buffer)].data() + r.offset, value, r.length);
          break;
        }
        case 1: {
          const std::size_t floats = static_cast<std::size_t>(pick(1, 32));
          const Range dst = random_range(floats, 0, 3), src = random_range(floats, 0, 3);
          if (overlap(dst, src)) break;
          ACCORD_RETURN_IF_ERROR(g.copy(view_of(dst), view_of(src)).status());
          std::memcpy(model_[static_cast<std::size_t>(dst.buffer)].data() + dst.offset,
                      model_[static_cast<std::size_t>(src.buffer)].data() + src.offset, dst.length);
          break;
        }
        default: {
          const Range a = random_range(kKernelFloats, 2, 3), b = random_range(kKernelFloats, 2, 3),
                      out = random_range(kKernelFloats, 2, 3);
          if (overlap(out, a) || overlap(out, b)) break;
          const std::array<BufferView, 3> views = {view_of(a), view_of(b), view_of(out)};
          ACCORD_RETURN_IF_ERROR(g.gpu(o.add, views).status());
          float va[kKernelFloats], vb[kKernelFloats], vo[kKernelFloats];
          std::memcpy(va, model_[static_cast<std::size_t>(a.buffer)].data() + a.offset, kKernelBytes);
          std::memcpy(vb, model_[static_cast<std::size_t>(b.buffer)].data() + b.offset, kKernelBytes);
          for (std::uint32_t i = 0; i < kKernelFloats; ++i) vo[i] = va[i] + vb[i];
          std::memcpy(model_[static_cast<std::size_t>(out.buffer)].data() + out.offset, vo, kKernelBytes);
          break;
        }
      }
    }
    if (g.size() > 0) {
      ACCORD_ASSIGN_OR_RETURN(ExecutableGraph exe, std::move(g).prepare());
      ACCORD_ASSIGN_OR_RETURN(Completion done, exe.submit());
      ACCORD_RETURN_IF_ERROR(done.wait());
    }
    ACCORD_ASSIGN_OR_RETURN(Completion read, o.read_gpu.submit());
    ACCORD_RETURN_IF_ERROR(read.wait());
    ACCORD_ASSIGN_OR_RETURN(std::vector<std::uint8_t> h0, read_all(o.buffers[0]));
    ACCORD_ASSIGN_OR_RETURN(std::vector<std::uint8_t> h1, read_all(o.buffers[1]));
    ACCORD_ASSIGN_OR_RETURN(std::vector<std::uint8_t> gpu, read_all(o.readback));
    const bool right = h0 == model_[0] && h1 == model_[1] &&
                       std::equal(gpu.begin(), gpu.begin() + kBufferBytes, model_[2].begin()) &&
                       std::equal(gpu.begin() + kBufferBytes, gpu.end(), model_[3].begin());
    if (right) ++report_.graphs_ok;
    else ++report_.wrong;
    return Status();
  }

  Runtime& rt_;
  std::mt19937 rng_;
  std::optional<TenantObjects> objects_;
  std::array<std::vector<std::uint8_t>, 4> model_;
  TenantReport report_;
};

// Submits a kernel that writes through a wild pointer every `period`; returns when each
// was submitted (seconds since t0) and how each ended.
struct FaultReport {
  std::vector<double> submitted;
  std::uint64_t execution = 0, device_lost = 0, other = 0;
  std::vector<std::string> notes;
};

FaultReport run_faulter(Runtime& rt, Clock::time_point t0, Clock::time_point deadline, std::chrono::milliseconds period) {
  FaultReport report;
  GpuKernelImage image;
  image.image = ptx();
  image.entry = "accord_gpu_wild_write";
  KernelContract contract;
  contract.bindings = {{4, 4, Access::Write, "u32 unused"}};
  append_constant(contract.constants, std::uint64_t{0x10});  // no allocation lives there
  auto next = Clock::now() + period;
  while (next < deadline) {
    std::this_thread::sleep_until(next);
    next += period;
    // Everything is made anew: after the previous fault the old kernel and buffer are lost.
    Status status;
    const double when = seconds_since(t0);
    auto attempt = [&]() -> Status {
      ACCORD_ASSIGN_OR_RETURN(Kernel wild, rt.load_gpu_kernel(0, image, contract));
      ACCORD_ASSIGN_OR_RETURN(Buffer target, rt.allocate(4, MemoryPlacement::gpu_local(0)));
      Graph g = rt.graph();
      const std::array<BufferView, 1> views = {target.view()};
      ACCORD_RETURN_IF_ERROR(g.gpu(wild, views).status());
      ACCORD_ASSIGN_OR_RETURN(ExecutableGraph exe, std::move(g).prepare());
      ACCORD_ASSIGN_OR_RETURN(Completion done, exe.submit());
      return done.wait();
    };
    status = attempt();
    report.submitted.push_back(when);
    if (status.kind() == ErrorKind::Execution) ++report.execution;
    else if (status.kind() == ErrorKind::DeviceLost) ++report.device_lost;
    else ++report.other;
    if (report.notes.size() < 2) report.notes.push_back(status.ok() ? std::string("ok (no fault!)") : status.to_string());
  }
  return report;
}

// "2026-12-02 06:11:05.344 ..." -> seconds of the day, with milliseconds.
std::optional<double> log_time(const std::string& line) {
  int h = 0, m = 0, s = 0, ms = 0;
  if (line.size() < 23 || std::sscanf(line.c_str() + 11, "%d:%d:%d.%d", &h, &m, &s, &ms) != 4) return std::nullopt;
  return h * 3600.0 + m * 60.0 + s + ms / 1000.0;
}

// Seconds from each "is lost" to the next "is back in service" of the same device in
// accordd's log.
std::vector<double> recovery_times(const std::string& log) {
  std::vector<double> out;
  std::istringstream in(log);
  std::string line;
  std::optional<double> lost_at;
  while (std::getline(in, line)) {
    if (line.find(" is lost: ") != std::string::npos && !lost_at) lost_at = log_time(line);
    if (line.find(" is back in service") != std::string::npos && lost_at) {
      if (auto t = log_time(line)) out.push_back(*t - *lost_at);
      lost_at.reset();
    }
  }
  return out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void print_row(const TenantReport& r) {
  std::printf("| %-10s | %9llu | %5llu | %11llu | %9llu | %5llu | %12.3f |\n", r.name.c_str(),
              static_cast<unsigned long long>(r.graphs_ok), static_cast<unsigned long long>(r.wrong),
              static_cast<unsigned long long>(r.device_lost), static_cast<unsigned long long>(r.execution),
              static_cast<unsigned long long>(r.other), r.longest_outage);
}

int isolated_tenant_main(const std::string& socket, int seconds, std::uint32_t seed) {
  auto rt = Runtime::connect(socket);
  if (!rt.ok()) {
    std::printf("connect failed: %s\n", rt.status().to_string().c_str());
    return 1;
  }
  const auto t0 = Clock::now();
  VerifiedTenant tenant(*rt, "isolated", seed);
  const TenantReport r = tenant.run(t0, t0 + std::chrono::seconds(seconds));
  std::printf("isolated %llu %llu %llu %llu %llu\n", static_cast<unsigned long long>(r.graphs_ok),
              static_cast<unsigned long long>(r.wrong), static_cast<unsigned long long>(r.device_lost),
              static_cast<unsigned long long>(r.execution), static_cast<unsigned long long>(r.other));
  for (const std::string& note : r.notes) std::printf("note %s\n", note.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 4 && args[0] == "--tenant")
    return isolated_tenant_main(args[1], std::stoi(args[2]), static_cast<std::uint32_t>(std::stoul(args[3])));
  int seconds = 60;
  if (args.size() == 2 && args[0] == "--seconds") seconds = std::stoi(args[1]);
  else if (!args.empty()) {
    std::fprintf(stderr, "usage: gpu_fault_storm [--seconds N]\n");
    return 2;
  }
  if (accord_gpu_test_ptx_size == 0) {
    std::printf("skipped: nvcc was not found when this test was built\n");
    return kSkipped;
  }
  if (geteuid() != 0) {
    std::printf("skipped: needs root, to run the isolated tenant as uid %u\n", kIsolatedUid);
    return kSkipped;
  }
  using accord::integration::DaemonOptions;
  using accord::integration::DaemonProcess;
  DaemonOptions options;
  options.extra_args = {"--gpu-isolation", "uid." + std::to_string(kIsolatedUid), "--allow-uid",
                        std::to_string(kIsolatedUid), "--log-level", "info"};
  options.socket_mode = 0666;
  options.dir_mode = 0755;
  std::optional<DaemonProcess> daemon;
  try {
    daemon.emplace(options);
  } catch (const std::exception& e) {
    std::printf("FAILED: accordd did not start: %s\n", e.what());
    return 1;
  }
  auto probe = Runtime::connect(daemon->grpc_socket());
  if (!probe.ok()) {
    std::printf("FAILED: connecting: %s\n", probe.status().to_string().c_str());
    return 1;
  }
  if (auto gpu = probe->gpu(0); !gpu.ok() || gpu->state != DeviceState::Present) {
    std::printf("skipped: no GPU here: %s\n", gpu.ok() ? gpu->reason.c_str() : gpu.status().to_string().c_str());
    return kSkipped;
  }

  std::printf("fault storm: %d s; a wild-pointer kernel every 2 s; 3 shared tenants + 1 isolated (uid %u)\n",
              seconds, kIsolatedUid);
  std::fflush(stdout);
  accord::integration::Child isolated(accord::integration::SpawnOptions{
      {"/proc/self/exe", "--tenant", daemon->grpc_socket(), std::to_string(seconds), "7"},
      daemon->dir().file("isolated.out"), daemon->dir().file("isolated.err"), kIsolatedUid, kIsolatedUid});
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::seconds(seconds);
  std::vector<TenantReport> reports(3);
  std::vector<std::thread> threads;
  std::vector<Runtime> runtimes;
  for (int i = 0; i < 3; ++i) {
    auto rt = Runtime::connect(daemon->grpc_socket());
    if (!rt.ok()) {
      std::printf("FAILED: connecting tenant %d: %s\n", i, rt.status().to_string().c_str());
      return 1;
    }
    runtimes.push_back(std::move(rt).value());
  }
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      VerifiedTenant tenant(runtimes[static_cast<std::size_t>(i)], "shared-" + std::to_string(i),
                            static_cast<std::uint32_t>(100 + i));
      reports[static_cast<std::size_t>(i)] = tenant.run(t0, deadline);
    });
  auto faulter_rt = Runtime::connect(daemon->grpc_socket());
  if (!faulter_rt.ok()) {
    std::printf("FAILED: connecting the faulting tenant: %s\n", faulter_rt.status().to_string().c_str());
    return 1;
  }
  const FaultReport faults = run_faulter(*faulter_rt, t0, deadline, 2s);
  for (std::thread& t : threads) t.join();
  const auto isolated_status = isolated.wait_or_kill(60s);

  int failures = 0;
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) {
      ++failures;
      std::printf("FAILED: %s\n", what.c_str());
    }
  };
  std::printf("\n| tenant     | graphs ok | wrong | DeviceLost | Execution | other | longest outage (s) |\n"
              "|------------|-----------|-------|------------|-----------|-------|--------------------|\n");
  for (const TenantReport& r : reports) print_row(r);
  // The isolated tenant's line: "isolated OK WRONG LOST EXECUTION OTHER".
  TenantReport iso;
  iso.name = "isolated";
  {
    unsigned long long ok = 0, wrong = 0, lost = 0, exec = 0, other = 0;
    const std::string out = isolated.out();
    const bool parsed = std::sscanf(out.c_str(), "isolated %llu %llu %llu %llu %llu", &ok, &wrong, &lost, &exec, &other) == 5;
    require(parsed && isolated_status.success(), "the isolated tenant did not finish: " + isolated.report());
    iso.graphs_ok = ok;
    iso.wrong = wrong;
    iso.device_lost = lost;
    iso.execution = exec;
    iso.other = other;
    print_row(iso);
    if (lost + exec + other > 0) std::printf("isolated tenant output:\n%s\n", out.c_str());
  }
  std::printf("\nfaulting tenant: %zu wild kernels; Execution %llu, DeviceLost %llu, other %llu\n",
              faults.submitted.size(), static_cast<unsigned long long>(faults.execution),
              static_cast<unsigned long long>(faults.device_lost), static_cast<unsigned long long>(faults.other));
  for (const std::string& note : faults.notes) std::printf("  e.g. %s\n", note.c_str());

  require(daemon->running(), "accordd exited during the storm:\n" + daemon->report());
  const std::vector<double> recoveries = recovery_times(daemon->stderr_text());
  if (const char* keep = std::getenv("ACCORD_STORM_LOG")) {  // accordd's log, for the record
    if (FILE* f = std::fopen(keep, "w")) {
      const std::string text = daemon->stderr_text();
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  }
  std::printf("recoveries (s):");
  for (double r : recoveries) std::printf(" %.3f", r);
  std::printf("\n");
  std::printf("\nGPU back in service after each loss (accordd's log, %zu losses): p50 %.3f s, max %.3f s "
              "(goal: within 1 s: %s)\n",
              recoveries.size(), percentile(recoveries, 0.5), percentile(recoveries, 1.0),
              !recoveries.empty() && percentile(recoveries, 1.0) <= 1.0 ? "met" : "MISSED");

  require(faults.execution + faults.device_lost >= faults.submitted.size() && faults.other == 0,
          "a wild kernel did not fail with Execution or DeviceLost");
  require(faults.execution > 0, "no wild kernel failed with Execution");
  require(recoveries.size() >= faults.execution, "fewer recoveries in accordd's log than faults");
  for (const TenantReport& r : reports) {
    for (const std::string& note : r.notes) std::printf("  %s: %s\n", r.name.c_str(), note.c_str());
    require(r.wrong == 0, r.name + ": a result reported successful was wrong");
    require(r.other == 0, r.name + ": failed with a kind other than DeviceLost or Execution");
    require(r.graphs_ok > 0, r.name + ": no graph completed");
    // Each failure is work in flight at a fault (or refused while the GPU came back):
    // within 2 s after a wild kernel was submitted.
    for (double t : r.failure_times) {
      const bool near_fault = std::any_of(faults.submitted.begin(), faults.submitted.end(),
                                          [&](double f) { return t >= f - 0.05 && t <= f + 2.0; });
      require(near_fault, r.name + ": a failure at " + std::to_string(t) + " s, not within 2 s of a fault");
    }
  }
  require(iso.wrong == 0 && iso.device_lost + iso.execution + iso.other == 0 && iso.graphs_ok > 0,
          "the isolated tenant saw a failure or a wrong result, or ran nothing");
  const auto stopped = daemon->stop(30s);
  require(stopped.success(), "accordd did not stop cleanly: " + stopped.describe());
  std::printf("\n%s\n", failures == 0 ? "fault storm: PASSED" : "fault storm: FAILED");
  return failures == 0 ? 0 : 1;
}
