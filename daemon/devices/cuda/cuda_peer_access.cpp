// Grants of one VMM range to other GPUs. A VMM mapping is reachable by exactly the
// devices cuMemSetAccess named, and the setting is per range, not per admission: two
// admissions of the same memory to one GPU share a grant, so it is counted.
#include "daemon/devices/cuda/cuda_peer_access.h"

#include <algorithm>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {
namespace {

CUmemAccessDesc access_for(int ordinal, CUmemAccess_flags flags) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = ordinal;
  access.flags = flags;
  return access;
}

}  // namespace

Status CudaPeerAccess::acquire(int ordinal, const std::string& what) {
  const std::lock_guard lock(mu_);
  if (retired_) return internal_error("cuda: " + what + ": the memory is being freed");
  auto user = std::find_if(users_.begin(), users_.end(), [&](const auto& u) { return u.first == ordinal; });
  if (user != users_.end() && user->second > 0) {
    ++user->second;
    return Status();
  }
  const CudaSymbols& syms = *home_.syms;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(home_.context), "granting " + what);
  const CUmemAccessDesc access = access_for(ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuMemSetAccess(address_, bytes_, &access, 1), "granting " + what);
  if (user != users_.end())
    user->second = 1;
  else
    users_.emplace_back(ordinal, 1);
  return Status();
}

void CudaPeerAccess::release(int ordinal) noexcept {
  const std::lock_guard lock(mu_);
  auto user = std::find_if(users_.begin(), users_.end(), [&](const auto& u) { return u.first == ordinal; });
  if (user == users_.end() || user->second == 0 || --user->second > 0 || retired_) return;
  const CudaSymbols& syms = *home_.syms;
  static_cast<void>(home_.make_current());
  const CUmemAccessDesc access = access_for(ordinal, CU_MEM_ACCESS_FLAGS_PROT_NONE);
  static_cast<void>(syms.cuMemSetAccess(address_, bytes_, &access, 1));
}

void CudaPeerAccess::retire() noexcept {
  const std::lock_guard lock(mu_);
  retired_ = true;
}

std::uint32_t CudaPeerAccess::users(int ordinal) const {
  const std::lock_guard lock(mu_);
  for (const auto& [gpu, count] : users_)
    if (gpu == ordinal) return count;
  return 0;
}

}  // namespace accord::devices::cuda
