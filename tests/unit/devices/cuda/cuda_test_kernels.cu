// Kernels the CUDA backend's unit tests load, compiled at build time by nvcc (PTX for
// compute_75, a cubin for sm_80, fatbins). extern "C": the tests name them unmangled.
// Parameter layouts follow the backend's contract: pointers first, then constants.

// out[i] = a[i] + b[i]; constants: u32 count. Launch with enough threads for count.
extern "C" __global__ void accord_test_add_f32(const float* a, const float* b, float* out, unsigned count) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = a[i] + b[i];
}

__device__ void accord_test_spin(unsigned microseconds) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= 1000ull * microseconds) break;
  }
}

// Sleeps `microseconds`, then writes 0x5EE9D0E5 to marker[0]; constants: u32 microseconds.
extern "C" __global__ void accord_test_sleep_us(unsigned* marker, unsigned microseconds) {
  accord_test_spin(microseconds);
  *marker = 0x5EE9D0E5u;
}

// Sleeps `microseconds`, then writes `value` to out[0]; constants: u32 value, u32 microseconds.
extern "C" __global__ void accord_test_store_u32(unsigned* out, unsigned value, unsigned microseconds) {
  accord_test_spin(microseconds);
  *out = value;
}

// Waits up to `microseconds` for flag[0] to turn non-zero, then writes 1 to out[0] if it
// did and 2 if it timed out; constants: u32 microseconds. Only another kernel running at
// the same time can set the flag, so its result says whether the two ran side by side.
extern "C" __global__ void accord_test_await_u32(const unsigned* flag, unsigned* out, unsigned microseconds) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned result = 2;
  for (;;) {
    if (*static_cast<const volatile unsigned*>(flag) != 0) {
      result = 1;
      break;
    }
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= 1000ull * microseconds) break;
  }
  *out = result;
}

// out[0] = a[0] + b[0] + c[0]; no constants.
extern "C" __global__ void accord_test_sum3_u32(const unsigned* a, const unsigned* b, const unsigned* c,
                                                unsigned* out) {
  *out = *a + *b + *c;
}

// Writes through an address no allocation has (illegal address: a sticky fault); one binding.
extern "C" __global__ void accord_test_fault(unsigned* unused) {
  (void)unused;
  asm volatile("st.global.u32 [%0], %1;" ::"l"(16ull), "r"(1u) : "memory");
}
