// Whether one process's CUDA contexts can share memory: the question behind giving each
// tenant a context of its own under MPS (each context a client of the server, with its
// own address space), while one process still owns and hands out the memory.
#pragma once

#include "tests/bench/gpu_bench_chains.h"

namespace accord::bench::gpu {

// Table 5: two contexts made by this process (cuCtxCreate). A kernel of the second writes
// memory the first made, by VMM (cuMemCreate and a mapping) and by cuMemAlloc; a kernel
// of the first then reads it back into pinned host memory. Prints whether MPS is on and
// each way's result (the value read, or the failing call and its error).
void context_sharing(const cu::CudaSymbols& cuda);

}  // namespace accord::bench::gpu
