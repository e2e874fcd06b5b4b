// Kernels of the [gpu] suite, compiled by nvcc at build time: PTX (compute_75) and
// cubins for sm_80 and sm_90 (the wrong-target case). extern "C": loaded by name.
// Parameters follow Accord's contract: binding pointers in order, then constant bytes.

// out[i] = a[i] + b[i] for i < count.
extern "C" __global__ void accord_gpu_add_f32(const float* a, const float* b, float* out, unsigned count) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = a[i] + b[i];
}

// Writes through `address`, which no allocation holds: an illegal-address fault, sticky
// for the whole CUDA context. `unused` is the one binding.
extern "C" __global__ void accord_gpu_wild_write(unsigned* unused, unsigned long long address) {
  (void)unused;
  *reinterpret_cast<volatile unsigned*>(address) = 1u;
}
