// The stream pools of a tenant context (cuda_tenant_context.h).
#include "daemon/devices/cuda/cuda_tenant_context.h"

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

Status CudaTenantContext::ensure_level(std::uint32_t level) {
  if (level >= kMaxLevels) return invalid_error("cuda: stream priority level " + std::to_string(level) + " of " + shape_.gpu);
  if (levels_[level].load(std::memory_order_acquire) != nullptr) return Status();
  const std::lock_guard lock(levels_mu_);
  if (levels_[level].load(std::memory_order_relaxed) != nullptr) return Status();
  ACCORD_CU_RETURN_IF_ERROR(*shape_.syms, cuCtxSetCurrent(context_.context),
                            "making the context of " + shape_.gpu + " current");
  const int native = shape_.least_priority - static_cast<int>(level);
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<const LevelStreams> pools,
                          make_level_streams(shape_.syms, context_.context, native, shape_.streams_per_lane, shape_.gpu));
  // Owned before it is published: a failed push_back must not leave it reachable.
  const LevelStreams* published = pools.get();
  owned_levels_.push_back(std::move(pools));
  levels_[level].store(published, std::memory_order_release);
  return Status();
}

}  // namespace accord::devices::cuda
