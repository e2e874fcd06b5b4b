// CudaDeviceOptions: the settings of the CUDA backend, with in-class defaults and
// validate() (STYLE.md rule 3). Parsed from "cuda.<key>" strings only in
// cuda_registration.cpp; the device never sees a string.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "accord/status.h"
#include "daemon/devices/cuda/cuda_completion.h"
#include "daemon/devices/cuda/cuda_flags.h"
#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::devices::cuda {

enum class CudaCompletionMode { Flag, FlagAndEvent, Event };

// Which context a CudaDevice works in (cuda.context).
enum class CudaContextChoice { Primary, Own, Auto };

struct CudaDeviceOptions {
  // cuda.library: the driver library to dlopen.
  CudaLoaderOptions loader;
  // cuda.streams_per_lane (1..64): non-blocking streams per lane (Upload, Compute,
  // Download) and priority level; a launch takes an idle one (CudaDevice::take_stream),
  // so independent submissions on one lane, of every session, overlap up to this many.
  // 16: sixteen client processes of one accordd each run a graph at once, as sixteen
  // processes under MPS do (4 held them to 118,000 graphs/s on the H200; 16 gave
  // 174,000-269,000).
  std::uint32_t streams_per_lane = 16;
  // cuda.poll_spin_us (0..100000) and cuda.poll_max_sleep_us (1..100000): how the
  // completion thread polls (CudaPollOptions).
  CudaPollOptions poll;
  // cuda.completion: how a region's end is seen (README.md, "Completion").
  //   "flag" (default): the graph ends by writing a pinned host flag; waiters and the
  //     completion thread load it; successors on other lanes wait on it
  //     (cuStreamWaitValue32); a late flag is explained by cuStreamQuery.
  //   "flag_event": the graph also records the slot's event after the flag, and
  //     successors wait on the event.
  //   "event": no tail; launch records the slot's event and completion is cuEventQuery
  //     (also what "flag" falls back to when the driver cannot write flags from a graph).
  CudaCompletionMode completion = CudaCompletionMode::Flag;
  // cuda.flag_write: what writes the flag of a region with kernels, "kernel",
  // "early_kernel" (default; sm_90 and later: elsewhere, and in regions whose last
  // operations are not all kernels, "kernel") or "memory_op" (CudaFlagWriter); regions
  // of copies and fills only, and every region where the driver cannot run a kernel's
  // tail, get the memory operation.
  CudaFlagWriter flag_write = CudaFlagWriter::EarlyKernel;
  // cuda.ordinal: open only this GPU (a GPU executor process, daemon/executor, serves one
  // GPU and must create no context on the others); -1 (unset) opens every GPU. An
  // ordinal the driver does not have opens nothing (an empty list, not an error), which
  // is how accordd learns that the previous ordinal was the last.
  int ordinal = -1;
  // cuda.context: the context each opened GPU works in.
  //   "primary" (default): the GPU's primary context, shared with all CUDA code of the
  //     process.
  //   "own": a context made for this device alone (cuCtxCreate). Under MPS it is a client
  //     of the server of its own, with its own work queues, as a process is, so sixteen
  //     embedded runtimes are expected to share the GPU as sixteen MPS processes do,
  //     where on one context they stop near 0.87x of them (tests/bench/RESULTS.md,
  //     sessions 33-34; gpu_contexts_rows.sh measures it, not yet run on a GPU, which is
  //     why it is not the default). Without MPS a process's contexts are time-sliced.
  //   "auto": "own" when the driver says the GPU's contexts go through MPS
  //     (CU_DEVICE_ATTRIBUTE_MPS_ENABLED) and the server takes one more client, else
  //     "primary".
  CudaContextChoice context = CudaContextChoice::Primary;
  // cuda.tenant_contexts (1..48): how many contexts a GPU's sessions are spread over, by
  // session (RegionRequest::tenant): the device's own and up to 47 more made for it, each
  // when a session first needs it. Memory and completion words stay in the device's own
  // context. Under MPS each context is a client of the server of its own, so that the
  // sessions of one accordd share the GPU as that many MPS processes would; without MPS
  // the contexts are time-sliced. 1 (default): every session in one context.
  std::uint32_t tenant_contexts = 1;

  Status validate() const {
    ACCORD_RETURN_IF_ERROR(loader.validate());
    if (streams_per_lane < 1 || streams_per_lane > 64)
      return invalid_error("cuda: option cuda.streams_per_lane = " + std::to_string(streams_per_lane) +
                           " is not in 1..64");
    if (tenant_contexts < 1 || tenant_contexts > 48)
      return invalid_error("cuda: option cuda.tenant_contexts = " + std::to_string(tenant_contexts) +
                           " is not in 1..48");
    if (poll.spin.count() < 0 || poll.spin.count() > 100'000)
      return invalid_error("cuda: option cuda.poll_spin_us = " + std::to_string(poll.spin.count()) +
                           " is not in 0..100000");
    if (poll.max_sleep.count() < 1 || poll.max_sleep.count() > 100'000)
      return invalid_error("cuda: option cuda.poll_max_sleep_us = " + std::to_string(poll.max_sleep.count()) +
                           " is not in 1..100000");
    return Status();
  }
};

}  // namespace accord::devices::cuda
