#include "daemon/devices/cuda/cuda_stream_pool.h"

#include <mutex>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

namespace {

// Held while the backend makes any stream: a pool's streams are then made back to back.
std::mutex& creation_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

Result<std::shared_ptr<const LevelStreams>> make_level_streams(std::shared_ptr<const CudaSymbols> syms,
                                                               CUcontext context, int native_priority,
                                                               std::uint32_t per_lane, const std::string& gpu) {
  const std::lock_guard lock(creation_mutex());
  auto pools = std::make_shared<LevelStreams>();
  pools->syms = std::move(syms);
  const CudaSymbols& s = *pools->syms;
  for (std::size_t lane = 0; lane < kCudaLanes.size(); ++lane) {
    for (std::uint32_t i = 0; i < per_lane; ++i) {
      CUstream stream = nullptr;
      ACCORD_CU_RETURN_IF_ERROR(s, cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, native_priority),
                                "creating a " + std::string(to_string(kCudaLanes[lane])) + " stream of priority " +
                                    std::to_string(native_priority) + " on " + gpu);
      auto pooled = std::make_unique<PooledStream>();
      pooled->stream = UniqueCuStream(s, context, stream);
      pools->lanes[lane].push_back(std::move(pooled));
    }
  }
  return std::shared_ptr<const LevelStreams>(std::move(pools));
}

CUresult create_stream(const CudaSymbols& syms, CUstream* stream, int native_priority) noexcept {
  const std::lock_guard lock(creation_mutex());
  return syms.cuStreamCreateWithPriority(stream, CU_STREAM_NON_BLOCKING, native_priority);
}

}  // namespace accord::devices::cuda
