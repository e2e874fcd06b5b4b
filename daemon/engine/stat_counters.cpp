#include "daemon/engine/stat_counters.h"

namespace accord::engine {

void StatCounters::add_allocation(std::uint64_t bytes, bool import) noexcept {
  allocations_.fetch_add(1, std::memory_order_relaxed);
  if (import) imports_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t live = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void StatCounters::remove_live(std::uint64_t bytes) noexcept {
  live_.fetch_sub(bytes, std::memory_order_relaxed);
}

void StatCounters::add_copy(LaneKind lane, std::uint64_t bytes) noexcept {
  if (bytes == 0) return;
  copied_.fetch_add(bytes, std::memory_order_relaxed);
  switch (lane) {
    case LaneKind::Upload: uploaded_.fetch_add(bytes, std::memory_order_relaxed); break;
    case LaneKind::Download: downloaded_.fetch_add(bytes, std::memory_order_relaxed); break;
    default: device_copied_.fetch_add(bytes, std::memory_order_relaxed); break;
  }
}

Statistics StatCounters::snapshot() const noexcept {
  auto r = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  Statistics s;
  s.native_graphs_prepared = r(native_graphs_);
  s.copy_streams_created = r(copy_streams_);
  s.allocations = r(allocations_);
  s.imports = r(imports_);
  s.submissions = r(submissions_);
  s.completions = r(completions_);
  s.copied_bytes = r(copied_);
  s.uploaded_bytes = r(uploaded_);
  s.downloaded_bytes = r(downloaded_);
  s.device_copied_bytes = r(device_copied_);
  s.cache_maintenance_bytes = r(cache_maintenance_);
  s.live_bytes = r(live_);
  s.peak_bytes = r(peak_);
  return s;
}

}  // namespace accord::engine
