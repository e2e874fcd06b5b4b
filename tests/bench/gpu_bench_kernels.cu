// Kernels of gpu_graph_bench: one step of a chain (out[0] = in[0] + 1) that first spins
// for `spin_ns` nanoseconds on the GPU's global timer, so a kernel's length is set by
// the benchmark, not by the compiler. With a large grid and a long spin it fills every
// SM (the noisy neighbour).
extern "C" __global__ void accord_bench_step(float* out, const float* in, unsigned long long spin_ns) {
  if (spin_ns != 0) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - start >= spin_ns) break;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = in[0] + 1.0f;
}

// A completion flag written by a kernel rather than a stream memory operation: after
// every write before it has reached the system (the fence), one thread stores 1.
extern "C" __global__ void accord_bench_flag(unsigned* flag) {
  __threadfence_system();
  *static_cast<volatile unsigned*>(flag) = 1;
}
