#include "daemon/engine/allocation.h"

#include "daemon/engine/engine.h"

namespace accord::engine {

Allocation::Allocation(Ref<Session> session, std::uint64_t id, std::uint8_t device,
                       MemoryPlacement placement, std::unique_ptr<devices::DeviceMemory> memory,
                       std::size_t bytes) noexcept
    : session_(std::move(session)),
      id_(id),
      device_(device),
      placement_(placement),
      memory_(std::move(memory)),
      bytes_(bytes) {}

Allocation::~Allocation() {
  // Runs only when nothing can touch the memory any more: prepared graphs and pending
  // work retain their allocations, and quarantine retains poisoned ones.
  memory_.reset();
  session_->release_budget(bytes_);
  session_->counters().remove_live(bytes_);
  session_->engine().counters().remove_live(bytes_);
}

void Allocation::poison(std::string message) noexcept {
  if (poisoned_.load(std::memory_order_relaxed)) return;
  poison_message_ = std::move(message);
  poisoned_.store(true, std::memory_order_release);
}

}  // namespace accord::engine
