// Device states and lookup. Loss is one atomic flag per device so that the submit path
// can check it without a lock; the cause string is written once, under a mutex, before
// the flag is published.
#include "daemon/devices/device_registry.h"

namespace accord::devices {

DeviceRegistry::~DeviceRegistry() {
  // A device might still report loss from one of its threads while being destroyed:
  // destroy devices while their entries (the listeners) are still alive, last first.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) (*it)->device.reset();
}

DeviceRegistry::DeviceRegistry(DeviceRegistry&& other) noexcept
    : entries_(std::move(other.entries_)),
      absent_(std::move(other.absent_)),
      observer_(other.observer_),
      losses_(other.losses_.load()),
      recoveries_(other.recoveries_.load()) {
  attach_all();
}

void DeviceRegistry::attach_all() noexcept {
  for (auto& e : entries_) {
    e->registry = this;
    e->device->attach(*e);
  }
}

DeviceIndex DeviceRegistry::add(std::unique_ptr<Device> device, std::string isolation) {
  auto entry = std::make_unique<Entry>();
  entry->index = static_cast<DeviceIndex>(entries_.size());
  entry->device = std::move(device);
  entry->isolation = std::move(isolation);
  entries_.push_back(std::move(entry));
  attach_all();
  return static_cast<DeviceIndex>(entries_.size() - 1);
}

void DeviceRegistry::add_absent(std::string backend, std::string reason) {
  absent_.push_back({std::move(backend), std::move(reason)});
}

int DeviceRegistry::find_for(MemoryPlacement placement, std::string_view isolation) const noexcept {
  return find(placement.home(), isolation);
}

int DeviceRegistry::find(DeviceId id, std::string_view isolation) const noexcept {
  int shared = -1;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i]->device->info().id() != id) continue;
    if (!isolation.empty() && entries_[i]->isolation == isolation) return static_cast<int>(i);
    if (shared < 0 && entries_[i]->isolation.empty()) shared = static_cast<int>(i);
  }
  return shared;
}

std::string DeviceRegistry::describe() const {
  std::string out;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i) out += ", ";
    out += entries_[i]->device->info().id().to_string();
    if (!entries_[i]->isolation.empty()) out += " [" + entries_[i]->isolation + "]";
    if (lost(i)) out += " (lost)";
  }
  for (std::size_t i = 0; i < absent_.size(); ++i) {
    out += i ? "; " : "; absent: ";
    out += absent_[i].reason;
  }
  return out;
}

std::string DeviceRegistry::loss_cause(std::size_t index) const {
  std::lock_guard lock(entries_[index]->cause_mu);
  return entries_[index]->cause;
}

Status DeviceRegistry::lost_error(std::size_t index) const {
  const DeviceInfo& info = entries_[index]->device->info();
  return device_lost_error("device " + info.id().to_string() + " (" + info.name + ") is lost: " +
                           loss_cause(index));
}

bool DeviceRegistry::mark_lost(std::size_t index, Status cause) noexcept {
  Entry& e = *entries_[index];
  {
    std::lock_guard lock(e.cause_mu);
    if (e.lost.load(std::memory_order_relaxed)) return false;
    e.cause = cause.ok() ? std::string("reported lost") : std::string(cause.message());
    e.lost.store(true, std::memory_order_release);
    record_event_locked(e, DeviceEvent::Kind::Lost, e.cause);
  }
  losses_.fetch_add(1, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->on_device_lost(static_cast<DeviceIndex>(index), cause);
  return true;
}

Status DeviceRegistry::check_generation(std::size_t index, std::uint32_t generation) const {
  if (lost(index)) return lost_error(index);
  if (this->generation(index) == generation) return Status();
  const DeviceInfo& info = entries_[index]->device->info();
  return device_lost_error("device " + info.id().to_string() + " (" + info.name +
                           ") was lost and has restarted since this was made on it; the loss: " +
                           loss_cause(index));
}

bool DeviceRegistry::recover(std::size_t index, std::string how) noexcept {
  Entry& e = *entries_[index];
  {
    std::lock_guard lock(e.cause_mu);
    if (!e.lost.load(std::memory_order_relaxed)) return false;
    // The generation moves before the flag clears: a thread that sees the device present
    // again also sees that everything of the old generation is stale.
    e.generation.fetch_add(1, std::memory_order_acq_rel);
    e.lost.store(false, std::memory_order_release);
    record_event_locked(e, DeviceEvent::Kind::Recovered, how);
  }
  e.recoveries.fetch_add(1, std::memory_order_relaxed);
  recoveries_.fetch_add(1, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->on_device_recovered(static_cast<DeviceIndex>(index), how);
  return true;
}

void DeviceRegistry::record_event_locked(Entry& e, DeviceEvent::Kind kind, std::string what) {
  if (e.events.size() == kHistory) e.events.erase(e.events.begin());
  e.events.push_back({kind, std::chrono::system_clock::now(), std::move(what)});
}

std::vector<DeviceEvent> DeviceRegistry::history(std::size_t index) const {
  std::lock_guard lock(entries_[index]->cause_mu);
  return entries_[index]->events;
}

void DeviceRegistry::shut_down_all() noexcept {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) (*it)->device->shut_down();
}

}  // namespace accord::devices
