// The many-tenant GPU benchmarks of gpu_graph_bench (issues "CUDA backend" and
// "Submission ring"): 16 tenants on threads of one process, the noisy neighbour, and 16
// tenant processes (time-sliced, under MPS, or through accordd).
#pragma once

#include <cstddef>
#include <string>

#include "tests/bench/gpu_bench_chains.h"

namespace accord::bench::gpu {

// Table 2: 16 tenants, each its own runtime (or direct stream) on its own thread,
// looping a 10-kernel graph of 2 us kernels for 3 s. `only`: one row or group, or every
// row when empty ("direct", "flag", "event", "ctx", "green", "accord", "accord-event", "accord-memop",
// "accord-1stream", "accord-executor"; the last only when named).
void tenants(const cu::CudaSymbols& cuda, const std::string& only);

// Table 2b: the launch ceiling of `launchers` threads of one process keeping the 16
// tenants' chains in flight between them (each thread launches its share again as each
// ends): what a launching process (an executor, accordd) can reach with that many
// launching threads, with no client, ring or hop around it.
// `tail`: what writes each chain's flag ("flag": a memory-operation node, Accord's tail
// before session 21; "kernel": a one-thread kernel, its tail since).
void launchers(const cu::CudaSymbols& cuda, int launchers, const std::string& tail);

// Table 3 (3d through accordd when `socket` names its channel): one tenant saturating
// every SM, three timing a 1-kernel graph, with and without priorities.
void neighbour(std::size_t iterations, const std::string& socket = {});

// Table 4: 16 tenant processes (this executable again, `--config child:...`), each
// launching directly (LABEL says how the GPU is shared: time-sliced, MPS) or, for
// "accordd", each a session of one accordd started here.
void tenant_processes(const std::string& label);

// The body of one tenant process: `spec` is what follows "child:" in --config.
int run_tenant_child(const std::string& spec);

}  // namespace accord::bench::gpu
