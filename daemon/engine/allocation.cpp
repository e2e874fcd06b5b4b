#include "daemon/engine/allocation.h"

#include "daemon/engine/engine.h"

namespace accord::engine {

Allocation::Allocation(Ref<Session> session, std::uint64_t id, devices::DeviceIndex home,
                       std::uint32_t home_generation, MemoryPlacement placement,
                       std::unique_ptr<devices::DeviceMemory> memory, std::size_t bytes) noexcept
    : session_(std::move(session)),
      id_(id),
      home_(home),
      home_generation_(home_generation),
      placement_(placement),
      memory_(std::move(memory)),
      bytes_(bytes),
      charged_(memory_->bytes()) {}

Allocation::~Allocation() {
  // Runs only when nothing can touch the memory any more: prepared graphs and pending
  // work retain their allocations, and quarantine retains poisoned ones. Admissions go
  // first: a GPU unregisters host pages before they are unmapped.
  admissions_.clear();
  memory_.reset();
  session_->release_budget(charged_);
  session_->counters().remove_live(charged_);
  session_->engine().counters().remove_live(charged_);
}

Result<const devices::AdmittedMemory*> Allocation::admission_for(devices::DeviceIndex index,
                                                                 std::uint32_t generation,
                                                                 devices::Device& device,
                                                                 const devices::DeviceInfo& home_info) {
  std::lock_guard lock(admissions_mu_);
  for (const Admitted& a : admissions_)
    if (a.device == index && a.generation == generation) return static_cast<const devices::AdmittedMemory*>(a.view.get());
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<devices::AdmittedMemory> view, device.admit(*memory_, home_info));
  admissions_.push_back({index, generation, std::move(view)});
  return static_cast<const devices::AdmittedMemory*>(admissions_.back().view.get());
}

void Allocation::poison(std::string message) noexcept {
  if (poisoned_.load(std::memory_order_relaxed)) return;
  poison_message_ = std::move(message);
  poisoned_.store(true, std::memory_order_release);
}

}  // namespace accord::engine
