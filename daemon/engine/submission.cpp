// Submission slots and their region sinks; the state machine lives in the scheduler.
#include "daemon/engine/submission.h"

#include <thread>

#include "daemon/engine/engine.h"

namespace accord::engine {
namespace {

Scheduler& scheduler_of(const Submission& s) { return s.graph().session().engine().scheduler(); }

}  // namespace

void RegionRun::on_done() noexcept { scheduler_of(*submission).region_finished(*this, Status()); }
void RegionRun::on_error(Status status) noexcept {
  scheduler_of(*submission).region_finished(*this, std::move(status));
}
void RegionRun::on_cancelled() noexcept {
  scheduler_of(*submission).region_finished(*this, cancelled_error("region cancelled by its device"));
}

Submission::Submission(PreparedGraph& graph, std::uint32_t index, std::size_t regions)
    : runs(std::make_unique<RegionRun[]>(regions)),
      region_count(static_cast<std::uint32_t>(regions)),
      graph_(&graph),
      index_(index) {
  const auto& prepared = graph.regions();
  for (std::size_t r = 0; r < regions; ++r) {
    RegionRun& run = runs[r];
    run.submission = this;
    run.region = static_cast<std::uint32_t>(r);
    if (r >= prepared.size() || !prepared[r].native_waits) continue;
    for (std::uint32_t p : prepared[r].predecessors)
      if (prepared[p].device == prepared[r].device) ++run.wait_capacity;
    if (run.wait_capacity) run.waits = std::make_unique<devices::RegionWait[]>(run.wait_capacity);
  }
}

// An observer keeps the graph (and with it this slot) alive, and keeps the slot from
// being reused, so its outcome stays readable.
void Submission::retain_observer() noexcept {
  graph_->retain();
  observers.fetch_add(1, std::memory_order_relaxed);
}

void Submission::release_observer() noexcept {
  observers.fetch_sub(1, std::memory_order_release);
  graph_->release();  // may destroy *this: no member access below
}

void Submission::wait_until_told() const noexcept {
  while (telling.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

Status Submission::wait() { return scheduler_of(*this).wait(*this); }

Result<bool> Submission::wait_for(std::chrono::nanoseconds timeout) {
  return scheduler_of(*this).wait_for(*this, timeout);
}

bool Submission::poll() const noexcept { return terminal(); }

std::optional<Status> Submission::result() const {
  if (!terminal()) return std::nullopt;
  return outcome;
}

void Submission::cancel() noexcept { scheduler_of(*this).cancel(*this); }

std::optional<CompletionProfile> Submission::profile() const {
  if (!terminal()) return std::nullopt;
  using us = std::chrono::duration<double, std::micro>;
  CompletionProfile p;
  p.elapsed_us = us(finished - accepted).count();
  if (any_started) p.queue_us = us(first_start - accepted).count();
  return p;
}

const void* Submission::domain() const noexcept { return &graph_->session(); }

}  // namespace accord::engine
