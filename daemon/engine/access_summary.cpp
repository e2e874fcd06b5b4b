// Union summaries and their conflict test: hrx-execution-semantics.md 3.3.
#include "daemon/engine/access_summary.h"

#include <algorithm>
#include <tuple>

namespace accord::engine {
namespace {

// A use opens (+1) or closes (-1) its read and write counts at `pos`.
struct Event {
  std::uint64_t allocation;
  std::size_t pos;
  std::int8_t reads;
  std::int8_t writes;
};

}  // namespace

AccessSummary AccessSummary::build(std::span<const AccessRange> uses) {
  std::vector<Event> events;
  events.reserve(2 * uses.size());
  for (const AccessRange& use : uses) {
    if (use.begin >= use.end) continue;
    const auto r = static_cast<std::int8_t>(reads(use.access));
    const auto w = static_cast<std::int8_t>(writes(use.access));
    events.push_back({use.allocation, use.begin, r, w});
    events.push_back({use.allocation, use.end, static_cast<std::int8_t>(-r),
                      static_cast<std::int8_t>(-w)});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.allocation, a.pos) < std::tie(b.allocation, b.pos);
  });

  AccessSummary summary;
  // Counts return to zero at each allocation's last event, so they need no reset.
  std::int64_t readers = 0;
  std::int64_t writers = 0;
  for (std::size_t i = 0; i < events.size();) {
    const Event& at = events[i];
    for (; i < events.size() && events[i].allocation == at.allocation &&
           events[i].pos == at.pos;
         ++i) {
      readers += events[i].reads;
      writers += events[i].writes;
    }
    if (i == events.size() || events[i].allocation != at.allocation) continue;
    if (readers == 0 && writers == 0) continue;  // a hole between uses
    SummaryInterval next{at.allocation, at.pos, events[i].pos, readers > 0, writers > 0};
    if (!summary.intervals_.empty()) {
      SummaryInterval& prev = summary.intervals_.back();
      if (prev.allocation == next.allocation && prev.end == next.begin &&
          prev.read == next.read && prev.write == next.write) {
        prev.end = next.end;
        continue;
      }
    }
    summary.intervals_.push_back(next);
    summary.writes_ = summary.writes_ || next.write;
  }
  return summary;
}

bool AccessSummary::conflicts(const AccessSummary& other) const noexcept {
  // Both lists are sorted and disjoint per allocation, so advancing whichever interval
  // ends first visits every overlapping pair exactly once.
  const auto& a = intervals_;
  const auto& b = other.intervals_;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].allocation != b[j].allocation) {
      (a[i].allocation < b[j].allocation ? i : j)++;
      continue;
    }
    if (a[i].begin < b[j].end && b[j].begin < a[i].end && (a[i].write || b[j].write)) {
      return true;
    }
    (a[i].end <= b[j].end ? i : j)++;
  }
  return false;
}

bool AccessSummary::writes_anything() const noexcept { return writes_; }

}  // namespace accord::engine
