// An armed chain: the benchmarks' chain of small kernels as a CUDA graph that is launched
// before it is asked for. A gate kernel at its head waits on the GPU for a doorbell word
// in pinned host memory, then runs the chain through a conditional node (or skips it when
// cancelled), so a submission is one store by the host and the launch is off its path.
// The question it answers: whether many tenants of one process, each ringing instead of
// launching, reach what MPS's separate processes reach.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::bench::gpu {

namespace cu = accord::devices::cuda;

// One thread at a time; setup failures end the process with the call's name.
class ArmedChain {
 public:
  // Null when the driver has no conditional nodes.
  static bool supported(const cu::CudaSymbols& cuda) {
    return cuda.cuGraphConditionalHandleCreate != nullptr && cuda.cuGraphAddNode != nullptr;
  }
  ArmedChain(const cu::CudaSymbols& cuda, std::size_t kernels, std::uint64_t spin_ns, int priority);
  ~ArmedChain();
  ArmedChain(const ArmedChain&) = delete;
  ArmedChain& operator=(const ArmedChain&) = delete;

  void bind_thread() const;
  // Rings for the launch armed before, arms the next, and spins until the chain's flag.
  void run_once() const;
  // Rings the doorbell with "cancelled" and waits: the armed launch ends without running
  // the chain. The destructor does it when no one did; run_once() is not called after.
  void cancel();
  // What the chain's last kernel wrote: 0 until the chain has run, then its length.
  float result() const;

 private:
  void ok(CUresult r, const char* what) const;
  struct Params {
    CUdeviceptr out, in;
    unsigned long long spin;
  };
  const cu::CudaSymbols& cuda_;
  std::size_t kernels_;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUdeviceptr buffers_ = 0;  // the chain's floats, then the gate's count of tickets taken
  std::atomic<std::uint32_t>* host_words_ = nullptr;  // [0] doorbell, [16] flag
  CUdeviceptr device_words_ = 0;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  CUstream stream_ = nullptr;
  mutable std::uint32_t ticket_ = 0;
  bool cancelled_ = false;
  std::vector<Params> params_;
};

}  // namespace accord::bench::gpu
