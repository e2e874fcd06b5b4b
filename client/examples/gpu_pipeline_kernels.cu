// The kernels of gpu_pipeline.cpp, compiled to PTX by nvcc when the project is built
// (cmake/AccordPtx.cmake). extern "C" keeps the entry names unmangled. Parameters follow
// Accord's contract: binding pointers in order, then the contract's constant bytes.

// out[i] = a[i] + b[i] for i < count.
extern "C" __global__ void accord_example_add_f32(const float* a, const float* b, float* out, unsigned count) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = a[i] + b[i];
}

// y[i] = alpha * x[i] + y[i] for i < count.
extern "C" __global__ void accord_example_saxpy_f32(const float* x, float* y, float alpha, unsigned count) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) y[i] = alpha * x[i] + y[i];
}
