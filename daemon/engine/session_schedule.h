// A session's scheduling state (engine item 13): its pending submissions in submission
// order, its lane flags, its lease waiters and its place in the engine's ready queue.
// Each session guards its own with its own mutex, so two sessions' submits and
// completions never contend; the Scheduler is its only user.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace accord::engine {

class LeaseWaiter;
class Session;
class Submission;

// Thread-safety: each member names the lock that guards it; `owner` is immutable.
struct SessionSchedule {
  SessionSchedule(Session& session, std::size_t lane_slots) : owner(session), lane_busy(lane_slots, 0) {}
  SessionSchedule(const SessionSchedule&) = delete;
  SessionSchedule& operator=(const SessionSchedule&) = delete;

  Session& owner;
  std::mutex mu;

  // --- mu ---
  // Pending submissions (accepted, not yet finished), oldest first: ordering, blockers
  // and producers never cross sessions (sessions never share allocations).
  Submission* pending_head = nullptr;
  Submission* pending_tail = nullptr;
  std::size_t occupancy = 0;  // pending submissions, against SessionLimits::max_submissions
  // One flag per (device, lane): index device * kLaneKindCount + lane.
  std::vector<std::uint8_t> lane_busy;
  // Leases waiting for this session's device work without a thread, in arrival order.
  LeaseWaiter* lease_queue_head = nullptr;
  LeaseWaiter* lease_queue_tail = nullptr;
  // Threads asleep on host_cv in a blocking acquire_lease.
  std::size_t lease_sleepers = 0;
  std::condition_variable host_cv;
  // In the ready queue, or popped and not yet looked at: set by whoever pushes it,
  // cleared by the thread that pops it, both under mu, so a session is queued at most
  // once and a change made while it is queued is seen by its popper.
  bool queued = false;

  // --- the ready queue's lock ---
  SessionSchedule* next_ready = nullptr;

  // --- the scheduler's session list lock ---
  SessionSchedule* prev_session = nullptr;
  SessionSchedule* next_session = nullptr;
};

}  // namespace accord::engine
