// The streams a GPU's launches take: for one priority level, a pool per lane (Upload,
// Compute, Download) of non-blocking streams, each counting its launches in flight
// (CudaDevice::take_stream), made back to back. Each CudaDevice has its own: a pool shared
// by every runtime of a process on one GPU was measured against them and made no
// difference (RESULTS.md, session 33).
// Thread-safety: make_level_streams and create_stream are thread-safe; a LevelStreams is
// immutable once made, apart from its streams' atomic launch counts.
#pragma once

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accord/lane.h"
#include "accord/status.h"
#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::devices::cuda {

// The lanes of a CUDA GPU, in the order of LevelStreams::lanes (LaneKind's values).
inline constexpr std::array kCudaLanes{LaneKind::Upload, LaneKind::Compute, LaneKind::Download};

struct alignas(64) PooledStream {  // a line each: launches from many threads count here
  UniqueCuStream stream;
  std::atomic<std::uint32_t> launches{0};
};

struct LevelStreams {
  std::shared_ptr<const CudaSymbols> syms;  // the driver of the streams, kept while they live
  std::array<std::vector<std::unique_ptr<PooledStream>>, kCudaLanes.size()> lanes;
};

// The pools of priority `native_priority` on `context`: `per_lane` streams for each lane,
// made back to back (no other stream of the backend is made between them, so a lane's
// streams take consecutive hardware work queues). The caller keeps `context` retained
// while it holds the result.
// Errors: the mapped kind of the failed cuStreamCreateWithPriority, naming `gpu`.
Result<std::shared_ptr<const LevelStreams>> make_level_streams(std::shared_ptr<const CudaSymbols> syms,
                                                               CUcontext context, int native_priority,
                                                               std::uint32_t per_lane, const std::string& gpu);

// cuStreamCreateWithPriority under the lock make_level_streams holds, for every other
// stream the backend makes (the zeroing stream, the flag probe's), so that none lands
// between a pool's streams. `context` must be current.
CUresult create_stream(const CudaSymbols& syms, CUstream* stream, int native_priority) noexcept;

}  // namespace accord::devices::cuda
