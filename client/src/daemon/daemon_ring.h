// DaemonRing: the client's side of its session's submission ring (ARCHITECTURE.md, "Data
// plane"; proto/wire/ring_layout.h). Submit, release, cancel and host leases go to
// accordd as ring entries instead of gRPC calls; accordd's answers come back on the
// completion queue and are sorted into tickets, one per submission or lease call in
// flight, by whichever waiting thread reads them.
// Thread-safety: every member is thread-safe. One thread at a time pushes (a mutex) and
// one reads answers (a try-lock: the others watch their ticket and the doorbell).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accord/completion.h"
#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "client/api/spare_core_probe.h"
#include "client/api/wait_forecast.h"
#include "proto/wire/submission_ring.h"

namespace accord::detail {

class DaemonRing {
 public:
  // Attaches to the ring accordd sent as `fd`, with `tickets` submissions tracked at once
  // (beyond that submit() is Busy and the caller uses gRPC). `session_socket` (borrowed)
  // is watched while waiting, so a wait ends with DeviceLost when accordd goes away.
  // `spin`: how long a waiting thread spins before it sleeps on the doorbell, while the
  // machine has a core to spare (SpareCoreProbe) or accordd runs ahead of this process
  // (wire::peer_runs_ahead); at most a few microseconds otherwise. `forecast_sleep`:
  // a wait first sleeps through most of what its graph took before (WaitForecast).
  static Result<std::unique_ptr<DaemonRing>> attach(UniqueFd fd, std::size_t tickets, int session_socket,
                                                    std::chrono::microseconds spin, bool forecast_sleep);

  struct Accepted {
    std::uint32_t ticket = 0;
    std::uint64_t handle = 0;  // accordd's completion handle
  };
  // The most producers one ring entry carries; a submission after more goes through gRPC.
  static constexpr std::size_t kMaxProducers = 3;
  // Submits prepared graph `graph` after `producers` (completion handles, at most
  // kMaxProducers) and waits for accordd to accept it. Empty, sending nothing, when every
  // ticket is in use: the caller uses gRPC. Busy when the ring is full (nothing was sent);
  // accordd's refusal as its Status otherwise.
  Result<std::optional<Accepted>> submit(std::uint64_t graph, std::span<const std::uint64_t> producers);
  // Asks accordd to release completion `handle` / to cancel its submission. Does not
  // wait. Busy when the ring is full (nothing was sent).
  Status release(std::uint64_t handle);
  Status cancel(std::uint64_t handle);

  // Whether this accordd serves leases on the ring (ring minor version 1 on); otherwise
  // the caller uses gRPC for them.
  bool serves_leases() const noexcept { return ring_.version_minor() >= 1; }
  // Leases [`offset`, `offset` + `length`) of buffer `buffer` (`write`: exclusively) and
  // waits for accordd's answer: with `wait`, until conflicting device work has ended (a
  // conflicting lease is Busy at once either way). Returns the lease's handle; empty,
  // sending nothing, when every ticket is in use (the caller uses gRPC). Busy when the
  // ring is full; DeviceLost when accordd went away; accordd's refusal otherwise.
  Result<std::optional<std::uint64_t>> acquire_lease(std::uint64_t buffer, std::uint64_t offset,
                                                     std::uint64_t length, bool write, bool wait);
  // Ends lease `lease` and waits until accordd did, so that whatever the caller sends
  // next, on the ring or over gRPC, finds it ended. False, sending nothing, when every
  // ticket is in use. Errors as above.
  Result<bool> release_lease(std::uint64_t lease);

  // Waits until `ticket`'s submission is terminal: true; false when `timeout` passed
  // first (negative: no limit); DeviceLost when accordd went away.
  Result<bool> wait(std::uint32_t ticket, std::chrono::nanoseconds timeout);
  // Reads what accordd answered so far (if no other thread is reading); true when
  // `ticket` is terminal. Never blocks.
  bool poll(std::uint32_t ticket);
  // After wait() or poll() returned true: the outcome and its profile.
  Status outcome(std::uint32_t ticket) const;
  CompletionProfile profile(std::uint32_t ticket) const;
  // How many tickets there are: ticket numbers are below this.
  std::size_t tickets() const noexcept { return tickets_.size(); }
  // The completion that held `ticket` is gone; the ticket is reused once accordd's last
  // answer for it has come.
  void forget(std::uint32_t ticket);

 private:
  enum State : std::uint32_t { kFree, kSubmitted, kAccepted, kRefused, kTerminal };
  struct Ticket {
    std::atomic<std::uint32_t> state{kFree};
    std::uint32_t generation = 0;  // tickets_mu_; tags carry it, so a stale answer is ignored
    bool forgotten = false;        // tickets_mu_
    // Written by the reader before it publishes the state (release), read after.
    std::uint64_t handle = 0;
    std::uint32_t status = 0;
    std::string message;
    double elapsed_us = 0;
    double queue_us = -1;
    // A submission's graph and when accordd accepted it (steady clock), for its forecast.
    std::uint64_t graph = 0;
    std::int64_t accepted_ns = 0;
  };
  // How long the graphs of this session take inside accordd, by graph handle (handles
  // that share an entry share a forecast: the lower of the two wins, so a sleep stays
  // short). Fixed, so that waits never allocate.
  static constexpr std::size_t kForecasts = 64;
  WaitForecast& forecast_of(std::uint64_t graph) noexcept { return forecasts_[graph % kForecasts]; }

  DaemonRing(wire::SubmissionRing ring, std::size_t tickets, int session_socket, std::chrono::microseconds spin,
             bool forecast_sleep);
  Status push(const wire::SubmitEntry& entry);
  // Sends `entry` under a free ticket (its tag is set here) and waits for accordd's first
  // answer. Empty, sending nothing, when no ticket is free. When accepted, the ticket is
  // kept if `keep` (a submission's terminal answer comes to it later), freed otherwise.
  Result<std::optional<Accepted>> call(wire::SubmitEntry entry, bool keep);
  // Reads every answer there is, if no other thread is; returns whether it read any.
  bool drain();
  void dispatch(const wire::CompletionEntry& answer, std::uint32_t position);
  // Waits until `done()` or `timeout`; DeviceLost when accordd went away.
  template <class Done>
  Result<bool> wait_until(Done done, std::chrono::nanoseconds timeout);
  // Spins until `ready()` for at most `limit`; with `watch_taken`, gives up early when
  // accordd's poller is not taking this client's entries. Returns ready().
  template <class Ready>
  bool spin_until(Ready ready, std::chrono::nanoseconds limit, bool watch_taken) const;
  bool accordd_gone() const;
  void free_ticket_locked(std::uint32_t index);
  static Status status_of(std::uint32_t code, const std::string& message);

  wire::SubmissionRing ring_;
  const int session_socket_;
  const std::chrono::microseconds spin_;
  const bool forecast_sleep_;
  // accordd runs at a lower nice value: spinning cannot keep its threads off a core.
  const bool accordd_ahead_;
  SpareCoreProbe cores_;  // whether spinning up to spin_ makes sense now
  std::mutex push_mu_;
  wire::RingProducer<wire::SubmitEntry> requests_;
  std::mutex read_mu_;
  wire::RingConsumer<wire::CompletionEntry> answers_;
  std::atomic<std::uint32_t> read_to_{0};  // answers consumed so far (the reader's index)
  std::atomic<std::uint32_t> sleeping_here_{0};  // this process's threads asleep on the answers' doorbell
  mutable std::mutex tickets_mu_;
  std::vector<std::unique_ptr<Ticket>> tickets_;
  std::vector<std::uint32_t> free_;  // reserved for every ticket
  std::array<WaitForecast, kForecasts> forecasts_;
};

}  // namespace accord::detail
