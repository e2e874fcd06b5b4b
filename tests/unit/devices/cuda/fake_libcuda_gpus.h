// The part of the stand-in driver (fake_libcuda.cpp) that pretends to have working GPUs:
// enough of the driver for CudaDevice::open, VMM memory, host registration, peer access
// and import, with every memory call written to a log the tests read; and, when a test
// turns it on, a graph engine that runs only completion-flag tails (the flag probe of
// cuda_flags.cpp). No other kernel, copy or fill runs. Internal to the fake library.
#pragma once

namespace accord_fake_cuda {

// Makes the fake report `count` GPUs that open (ACCORD_FAKE_CUDA "gpus=N").
void set_gpu_count(int count);
// The working entry point named `symbol`, or nullptr when this part has none.
void* gpu_symbol(const char* symbol);

}  // namespace accord_fake_cuda
