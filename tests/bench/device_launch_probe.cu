// A feasibility probe, not part of Accord: can graphs launched by the GPU itself (device
// graph launch) lift many tenants past one process's launch ceiling? Sixteen host threads
// launching 10-kernel graphs from one process stop near 330,000 graphs/s (the driver's
// one lock per context; tests/bench/RESULTS.md, sessions 21-25), below sixteen processes
// under MPS. Here a host thread's submit is one store into pinned memory: a resident
// scheduler kernel sees it and launches that tenant's graph from the GPU
// (cudaGraphLaunch in device code), and the graph's last kernel writes the tenant's
// completion word. Rows, side by side in one run: one tenant's submit -> complete, and
// sixteen tenants' aggregate graphs/s, launched from the host (graphs instantiated as
// usual, and the same graphs instantiated for device launch) and from the GPU. The answer
// (RESULTS.md, session 33): the same graphs/s either way; the ceiling is the GPU's.
//   nvcc -O2 -std=c++17 -arch=sm_90 -rdc=true device_launch_probe.cu -lcudadevrt -o device_launch_probe
//   device_launch_probe [--tenants N] [--seconds S] [--schedulers K]
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kMaxTenants = 32;     // one warp of the scheduler: a lane per tenant
constexpr int kKernels = 10;        // per tenant graph, then the completion kernel
constexpr unsigned long long kStepNs = 2000;
constexpr int kFireAndForgetBudget = 100;  // a graph may fire and forget at most 120
// Executable graphs per tenant, used in turn: the GPU refuses to launch a graph whose
// previous run has not wholly ended, which may outlast its completion word's store.
constexpr int kSlots = 4;

// Pinned host memory the GPU reads and writes (mapped).
struct Mailbox {
  unsigned long long request[kMaxTenants];  // the host bumps it to ask for one launch
  unsigned long long done[kMaxTenants];     // the graph's last kernel stores its launch number
  int stop;
  int error;                                // first cudaGraphLaunch error on the device
  int error_tenant;
  unsigned long long scheduler_runs;        // how many times the scheduler (re)started
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ unsigned long long global_ns() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void step(float* out, const float* in, unsigned long long spin_ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < spin_ns) {
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = in[0] + 1.0f;
}

// The tenant's completion: its launch count, visible to the host after the chain's writes.
__global__ void finish(unsigned long long* count, unsigned long long* done_word) {
  const unsigned long long n = ++*count;
  __threadfence_system();
  *reinterpret_cast<volatile unsigned long long*>(done_word) = n;
}

// Resident: lane t watches tenant t's request word and launches its graph once per bump.
// A graph may fire and forget about 120 graphs per run, and its tail launch (the way it
// runs again) waits until every one of them has ended: so `schedulers` copies take turns,
// and while one waits for its children to end before it runs again, the next one serves.
__global__ void scheduler(Mailbox* box, const cudaGraphExec_t* execs, unsigned long long* launched, int tenants,
                          int me, int schedulers, int* turn) {
  const int lane = threadIdx.x;
  const bool serves = lane < tenants;
  if (lane == 0) atomicAdd(&box->scheduler_runs, 1ULL);
  for (;;) {
    if (*reinterpret_cast<volatile int*>(&box->stop) != 0) return;
    if (*reinterpret_cast<volatile int*>(turn) == me) break;
  }
  __threadfence();
  unsigned long long mine = serves ? *reinterpret_cast<volatile unsigned long long*>(&launched[lane]) : 0;
  int used = 0;
  for (;;) {
    if (*reinterpret_cast<volatile int*>(&box->stop) != 0) break;
    bool launch = false;
    if (serves) {
      const unsigned long long asked = *reinterpret_cast<volatile unsigned long long*>(&box->request[lane]);
      launch = asked != mine;
    }
    if (launch) {
      const cudaError_t e = cudaGraphLaunch(execs[lane * kSlots + mine % kSlots], cudaStreamGraphFireAndForget);
      if (e != cudaSuccess && atomicCAS(&box->error, 0, static_cast<int>(e)) == 0) box->error_tenant = lane;
      ++mine;
    }
    used += __popc(__ballot_sync(0xffffffffu, launch));
    if (used + tenants > kFireAndForgetBudget) {
      if (serves) launched[lane] = mine;
      __threadfence();
      __syncwarp();
      if (lane == 0) {
        *reinterpret_cast<volatile int*>(turn) = (me + 1) % schedulers;
        const cudaError_t e = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
        if (e != cudaSuccess) atomicCAS(&box->error, 0, 1000 + static_cast<int>(e));
      }
      return;
    }
  }
  if (serves) launched[lane] = mine;
}

struct Tenant {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec[kSlots] = {};        // instantiated for device launch
  cudaGraphExec_t plain[kSlots] = {};       // instantiated as usual, for host launch
  cudaStream_t stream = nullptr;
  float* buffers = nullptr;
  unsigned long long* count = nullptr;
};

// One kernel node of `graph` after `after` (none when null).
cudaGraphNode_t add_kernel(cudaGraph_t graph, void* func, unsigned threads, void** args, cudaGraphNode_t after,
                           const char* what) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(1);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  cudaGraphNode_t node;
  check(cudaGraphAddKernelNode(&node, graph, after ? &after : nullptr, after ? 1 : 0, &p), what);
  return node;
}

Tenant make_tenant(int t, Mailbox* box_device) {
  Tenant tenant;
  check(cudaStreamCreateWithFlags(&tenant.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMalloc(&tenant.buffers, sizeof(float) * (kKernels + 1)), "cudaMalloc");
  check(cudaMemset(tenant.buffers, 0, sizeof(float) * (kKernels + 1)), "cudaMemset");
  check(cudaMalloc(&tenant.count, sizeof(unsigned long long)), "cudaMalloc");
  check(cudaMemset(tenant.count, 0, sizeof(unsigned long long)), "cudaMemset");
  check(cudaGraphCreate(&tenant.graph, 0), "cudaGraphCreate");
  cudaGraphNode_t previous = nullptr;
  for (int k = 0; k < kKernels; ++k) {
    float* out = tenant.buffers + k + 1;
    const float* in = tenant.buffers + k;
    unsigned long long ns = kStepNs;
    void* args[] = {&out, &in, &ns};
    previous = add_kernel(tenant.graph, reinterpret_cast<void*>(step), 32, args, previous, "cudaGraphAddKernelNode");
  }
  unsigned long long* count = tenant.count;
  unsigned long long* done_word = &box_device->done[t];
  void* args[] = {&count, &done_word};
  add_kernel(tenant.graph, reinterpret_cast<void*>(finish), 1, args, previous, "cudaGraphAddKernelNode(finish)");
  for (int s = 0; s < kSlots; ++s) {
    check(cudaGraphInstantiateWithFlags(&tenant.exec[s], tenant.graph, cudaGraphInstantiateFlagDeviceLaunch),
          "cudaGraphInstantiate(device launch)");
    check(cudaGraphUpload(tenant.exec[s], tenant.stream), "cudaGraphUpload");
    check(cudaGraphInstantiateWithFlags(&tenant.plain[s], tenant.graph, 0), "cudaGraphInstantiate");
    check(cudaGraphUpload(tenant.plain[s], tenant.stream), "cudaGraphUpload");
  }
  return tenant;
}

using Clock = std::chrono::steady_clock;

inline void cpu_relax() { __builtin_ia32_pause(); }

struct Row {
  double graphs_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
};

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1))];
}

enum class Launch { HostPlain, HostDeviceGraph, Device };

// Every tenant thread loops submit -> complete for `seconds`; `how` says who launches what.
Row run_tenants(std::vector<Tenant>& tenants, Mailbox* box, int count, double seconds, Launch how) {
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> samples(count);
  std::vector<unsigned long long> graphs(count, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      volatile unsigned long long* done = &box->done[t];
      volatile unsigned long long* request = &box->request[t];
      samples[t].reserve(1 << 20);
      while (!go.load()) cpu_relax();
      while (!stop.load(std::memory_order_relaxed)) {
        const unsigned long long want = *done + 1;
        const auto start = Clock::now();
        if (how == Launch::Device) {
          *request = *request + 1;
        } else {
          const int slot = static_cast<int>(want % kSlots);
          check(cudaGraphLaunch(how == Launch::HostPlain ? tenants[t].plain[slot] : tenants[t].exec[slot],
                                tenants[t].stream),
                "cudaGraphLaunch(host)");
        }
        for (unsigned spins = 0; *done != want; ++spins) {
          cpu_relax();
          if ((spins & 0xfffff) == 0 && Clock::now() - start > std::chrono::seconds(2)) {
            std::printf("  tenant %d: no completion within 2 s (device launch error %d, tenant %d)\n", t, box->error,
                        box->error_tenant);
            std::fflush(stdout);
            std::_Exit(3);
          }
        }
        samples[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        ++graphs[t];
      }
    });
  }
  const auto begin = Clock::now();
  go.store(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& th : threads) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  Row row;
  std::vector<double> all;
  unsigned long long total = 0;
  for (int t = 0; t < count; ++t) {
    total += graphs[t];
    all.insert(all.end(), samples[t].begin(), samples[t].end());
  }
  row.graphs_per_second = total / elapsed;
  row.p50_us = percentile(all, 0.5);
  row.p99_us = percentile(all, 0.99);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int tenant_count = 16;
  double seconds = 3;
  int schedulers = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tenants" && i + 1 < argc) tenant_count = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--schedulers" && i + 1 < argc) schedulers = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: device_launch_probe [--tenants N<=32] [--seconds S] [--schedulers K]\n");
      return 2;
    }
  }
  tenant_count = std::clamp(tenant_count, 1, kMaxTenants);
  // A row at a time, even into a pipe: a run killed by a timeout keeps what it printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::printf("device_launch_probe: skipped: no CUDA GPU here\n");
    return 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device_launch_probe on %s (sm_%d%d), %d tenants, %d schedulers taking turns\n", prop.name,
              prop.major, prop.minor, tenant_count, schedulers);

  Mailbox* box = nullptr;
  check(cudaHostAlloc(reinterpret_cast<void**>(&box), sizeof(Mailbox), cudaHostAllocMapped), "cudaHostAlloc");
  std::memset(box, 0, sizeof(Mailbox));
  Mailbox* box_device = nullptr;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&box_device), box, 0), "cudaHostGetDevicePointer");

  std::vector<Tenant> tenants;
  for (int t = 0; t < kMaxTenants; ++t) tenants.push_back(make_tenant(t, box_device));
  std::vector<cudaGraphExec_t> exec_handles;
  for (auto& t : tenants)
    for (int s = 0; s < kSlots; ++s) exec_handles.push_back(t.exec[s]);
  cudaGraphExec_t* execs_device = nullptr;
  const std::size_t exec_bytes = sizeof(cudaGraphExec_t) * exec_handles.size();
  check(cudaMalloc(&execs_device, exec_bytes), "cudaMalloc");
  check(cudaMemcpy(execs_device, exec_handles.data(), exec_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  unsigned long long* launched = nullptr;
  check(cudaMalloc(&launched, sizeof(unsigned long long) * kMaxTenants), "cudaMalloc");
  check(cudaMemset(launched, 0, sizeof(unsigned long long) * kMaxTenants), "cudaMemset");
  check(cudaDeviceSynchronize(), "setup");

  // Warm up: each graph once from the host.
  for (int t = 0; t < kMaxTenants; ++t) {
    for (int s = 0; s < kSlots; ++s) {
      check(cudaGraphLaunch(tenants[t].exec[s], tenants[t].stream), "warm-up launch");
      check(cudaGraphLaunch(tenants[t].plain[s], tenants[t].stream), "warm-up launch");
    }
    check(cudaStreamSynchronize(tenants[t].stream), "warm-up sync");
  }

  std::printf("  %-44s %10s %8s %8s\n", "how", "graphs/s", "p50 us", "p99 us");
  // One tenant alone for 1 s, then every tenant for `seconds`, launched `how`.
  const auto rows = [&](const char* name, Launch how) {
    const auto print = [](const std::string& label, const Row& r) {
      std::printf("  %-44s %10.0f %8.2f %8.2f\n", label.c_str(), r.graphs_per_second, r.p50_us, r.p99_us);
    };
    print(std::string(name) + ", 1 tenant", run_tenants(tenants, box, 1, 1.0, how));
    print(std::string(name) + ", " + std::to_string(tenant_count) + " threads",
          run_tenants(tenants, box, tenant_count, seconds, how));
  };
  // Host rows first; then the scheduler stays resident for the device rows.
  for (int round = 1; round <= 2; ++round) {
    rows("host launch", Launch::HostPlain);
    rows("host launch of device graphs", Launch::HostDeviceGraph);
  }
  // The host's requests must start where the device has counted: request == done.
  for (int t = 0; t < kMaxTenants; ++t) box->request[t] = 0;
  check(cudaMemset(launched, 0, sizeof(unsigned long long) * kMaxTenants), "cudaMemset");
  // done[] keeps counting from the host rows; the threads wait for done + 1.

  int* turn = nullptr;
  check(cudaMalloc(&turn, sizeof(int)), "cudaMalloc");
  check(cudaMemset(turn, 0, sizeof(int)), "cudaMemset");
  std::vector<cudaStream_t> sched_streams(schedulers);
  std::vector<cudaGraphExec_t> sched_execs;
  for (int k = 0; k < schedulers; ++k) {
    cudaGraph_t sched_graph;
    check(cudaGraphCreate(&sched_graph, 0), "cudaGraphCreate(scheduler)");
    int serve = tenant_count;
    int me = k;
    int count = schedulers;
    void* args[] = {&box_device, &execs_device, &launched, &serve, &me, &count, &turn};
    add_kernel(sched_graph, reinterpret_cast<void*>(scheduler), 32, args, nullptr, "cudaGraphAddKernelNode(scheduler)");
    cudaGraphExec_t sched_exec;
    check(cudaGraphInstantiateWithFlags(&sched_exec, sched_graph, cudaGraphInstantiateFlagDeviceLaunch),
          "cudaGraphInstantiate(scheduler)");
    check(cudaStreamCreateWithFlags(&sched_streams[k], cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaGraphUpload(sched_exec, sched_streams[k]), "cudaGraphUpload(scheduler)");
    sched_execs.push_back(sched_exec);
  }
  // Every scheduler uploaded before any runs: an upload waits for the resident one.
  check(cudaDeviceSynchronize(), "scheduler uploads");
  for (int k = 0; k < schedulers; ++k)
    check(cudaGraphLaunch(sched_execs[k], sched_streams[k]), "cudaGraphLaunch(scheduler)");

  // The device rows: a tenant that sees no completion within 2 s reports and gives up.
  // (the scheduler serves `tenant_count` lanes; the 1-tenant row uses lane 0 only)
  for (int round = 1; round <= 2 && box->error == 0; ++round) rows("device launch", Launch::Device);
  box->stop = 1;
  cudaError_t end = cudaSuccess;
  for (auto stream : sched_streams)
    if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) end = e;
  std::printf("  scheduler runs %llu, device launch error %d (tenant %d), end: %s\n", box->scheduler_runs, box->error,
              box->error_tenant, cudaGetErrorString(end));
  return box->error == 0 && end == cudaSuccess ? 0 : 1;
}
