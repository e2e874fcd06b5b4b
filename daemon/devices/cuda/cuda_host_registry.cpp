// One registration per host range, shared by the GPUs that admit it. The registration
// is made in the context of the first GPU that admits the pages but undone in the
// context of the last one to let go: PORTABLE pages belong to every context of the
// process, and the last admitter is the one certainly still open (the engine frees
// admissions before devices, but not in the order they were made).
#include "daemon/devices/cuda/cuda_host_registry.h"

#include <algorithm>
#include <utility>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {

CudaHostPin::CudaHostPin(CudaHostPin&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), context_(other.context_), pages_(other.pages_) {}

CudaHostPin& CudaHostPin::operator=(CudaHostPin&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = std::exchange(other.registry_, nullptr);
    context_ = other.context_;
    pages_ = other.pages_;
  }
  return *this;
}

void CudaHostPin::reset() noexcept {
  if (registry_ != nullptr) std::exchange(registry_, nullptr)->unpin(context_, pages_);
}

CudaHostRegistry& CudaHostRegistry::process() {
  static CudaHostRegistry* const registry = new CudaHostRegistry();
  return *registry;
}

Result<CudaHostPin> CudaHostRegistry::pin(const CudaContext& context, std::byte* pages, std::size_t bytes,
                                          const std::string& what) {
  const CudaSymbols& syms = *context.syms;
  const std::lock_guard lock(mu_);
  auto entry = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.pages == pages; });
  if (entry != entries_.end()) {
    if (entry->bytes != bytes)
      return invalid_error("cuda: " + what + " start where " + std::to_string(entry->bytes) +
                           " registered bytes start: one host range cannot be registered with two sizes");
    ++entry->shares;
    return CudaHostPin(*this, context, pages);
  }
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "registering " + what);
  const CUresult registered =
      syms.cuMemHostRegister(pages, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
  if (registered == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return unsupported_error("cuda: " + what + " are already registered by other code of this process");
  if (registered != CUDA_SUCCESS) return cuda_status(&syms, registered, "cuMemHostRegister", "registering " + what);
  // Undone by unpin() through the last admitter's driver table and context.
  entries_.push_back(Entry{pages, bytes, 1, UniqueCuHostRegistration(syms, nullptr, pages)});
  return CudaHostPin(*this, context, pages);
}

std::uint32_t CudaHostRegistry::shares(const std::byte* pages) const {
  const std::lock_guard lock(mu_);
  for (const Entry& e : entries_)
    if (e.pages == pages) return e.shares;
  return 0;
}

void CudaHostRegistry::unpin(const CudaContext& context, std::byte* pages) noexcept {
  const std::lock_guard lock(mu_);
  auto entry = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.pages == pages; });
  if (entry == entries_.end() || --entry->shares > 0) return;
  entry->registration.reset(*context.syms, context.context);
  entries_.erase(entry);
}

}  // namespace accord::devices::cuda
