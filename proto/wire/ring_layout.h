// The shared-memory submission ring of one session (ARCHITECTURE.md, "Data plane"): the
// byte layout of the memfd accordd creates and passes on the session channel, the
// entries, and the protocol's memory ordering. Both sides include this header; neither
// trusts what the other writes (see "Trust" below).
//
// Layout (offsets in bytes, every part 64-byte aligned):
//   0                 RingHeader: identity, geometry, queue indices, doorbells
//   sq_offset         sq_capacity x SubmitEntry     (client -> accordd)
//   cq_offset         cq_capacity x CompletionEntry (accordd -> client)
//   message_offset    cq_capacity x RingMessage     (the text of a completion's error)
// Capacities are powers of two. The memfd is sealed against shrinking and growing, so a
// mapping never faults on a truncated file.
//
// Versioning: `magic` names the format; `version_major` changes when a field moves or
// changes meaning (a side refuses another major); `version_minor` grows when fields are
// added in reserved space (older readers ignore them).
//
// Queues: each is single-producer, single-consumer. Indices are free-running 32-bit
// counters (position = index & (capacity - 1)); head is the consumer's, tail the
// producer's. The producer writes the entry, then publishes it with a release store of
// tail; the consumer loads tail with acquire, copies the entry out, then frees the
// position with a release store of head. Each side writes only its own index.
//
// Doorbells: a sequence word and a sleeper count per queue, for the consumer's side.
// The producer publishes, then reads the sleeper count with an acquire-release RMW and,
// only when a sleeper is counted, bumps the sequence and futex-wakes. The consumer spins
// for a bounded time; to sleep it reads the sequence, counts itself (an RMW), re-checks
// the queue, and futex-waits on the sequence it read, so a publish that came in between
// is never slept through (the Dekker pattern on sleepers / tail, with RMWs for fences).
// accordd's poller may publish several answers and ring once, at the end of its turn
// over its rings (RingProducer::try_push_unrung): the pattern needs only that the ring
// comes after the publish.
//
// Features: the client names the ones it understands when it asks for the ring
// (OpenRingPayload::features, session_messages.h); accordd uses only those, so either
// side may be older. kRingFeatureCombinedAnswers: a submission that has already ended
// when accordd accepts it (it ran on the poller thread, or a producer had failed) is
// answered once, with `terminal` = 2, instead of an acceptance and a terminal answer;
// the client then needs no second answer (no second wake-up when it sleeps).
// kRingFeatureQuietAcks: a ReleaseCompletion or Cancel that succeeds is not answered
// (nothing waits for it; a failed one still is), so the client is not woken for it.
//
// Backpressure: accordd takes a submission only while the completion queue has room for
// its answer and for every terminal completion it owes, so it never has to drop one. A
// client that reads completions while submissions wait in its queue rings the
// submission doorbell afterwards, since accordd may have passed its ring over.
//
// Trust: accordd keeps its own copy of the geometry (it chose it) and reads only the
// client's index and entries from shared memory; an index that claims more entries than
// the capacity, or an entry with an unknown opcode or out-of-range field, fails that
// entry or the session, never the daemon. The client checks the header against the
// file's size before it maps anything past the header.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace accord::wire {

inline constexpr std::uint32_t kRingMagic = 0x47524341;  // "ACRG" little-endian
inline constexpr std::uint16_t kRingVersionMajor = 1;
// 1: leases served (kLeaseWrite, kLeaseWait). 2: the features below are served.
inline constexpr std::uint16_t kRingVersionMinor = 2;

// OpenRingPayload::features bits (see "Features" above). Other bits are ignored.
inline constexpr std::uint64_t kRingFeatureCombinedAnswers = 1;
inline constexpr std::uint64_t kRingFeatureQuietAcks = 2;

// What a submission-queue entry asks for.
enum class RingOp : std::uint32_t {
  Submit = 1,             // run prepared graph `handle` after `producers`
  ReleaseCompletion = 2,  // the completion of submission `handle` (a tag) is dropped: free its slot
  Cancel = 3,             // cancel submission `handle` (a tag)
  AcquireLease = 4,       // lease [offset, offset + length) of buffer `handle`; `count`: kLease* flags
  ReleaseLease = 5,       // end lease `handle` (the handle AcquireLease answered)
};

// AcquireLease's `count`: a write (exclusive) lease, else a read (shared) one; and whether
// to wait for conflicting device work (answered once the lease is granted, without
// holding up the session's other entries) rather than be refused with Busy at once.
// A conflicting host lease is Busy either way. Other bits are Invalid.
inline constexpr std::uint32_t kLeaseWrite = 1;
inline constexpr std::uint32_t kLeaseWait = 2;

// Client -> accordd. 64 bytes.
struct SubmitEntry {
  std::uint32_t opcode = 0;  // RingOp
  std::uint32_t count = 0;   // Submit: producers used (<= 3); AcquireLease: access
  std::uint64_t tag = 0;     // the client's name for this request; its completion echoes it
  std::uint64_t handle = 0;  // see RingOp
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t producers[3] = {};  // Submit: tags of earlier submissions this one consumes
};
static_assert(sizeof(SubmitEntry) == 64);

// accordd -> client. 64 bytes. One per SubmitEntry, and for a Submit a second one when
// the submission reaches its terminal state (`terminal` = 1). An AcquireLease that waits
// (kLeaseWait) is answered once, when the lease is granted or refused. With the
// features above: one answer for a Submit that had ended already (`terminal` = 2), and
// none for a successful ReleaseCompletion or Cancel.
struct CompletionEntry {
  std::uint64_t tag = 0;      // the SubmitEntry's tag
  std::uint32_t opcode = 0;   // the SubmitEntry's opcode
  std::uint32_t status = 0;   // 0 OK, else 1 + ErrorKind (accord/status.h)
  std::uint32_t message_bytes = 0;  // > 0: the error text is in the RingMessage at this entry's position
  // Submit: 0 accepted (or refused), 1 finished, 2 accepted and finished at once
  // (kRingFeatureCombinedAnswers: `status` is the outcome, `handle` the acceptance's).
  std::uint32_t terminal = 0;
  // AcquireLease: the lease, for ReleaseLease: (buffer << 1) | write, so every read lease
  // of a buffer shares one and each ReleaseLease ends one. Submit: accordd's submission id.
  std::uint64_t handle = 0;
  double elapsed_us = 0;            // CompletionProfile: accepted -> terminal
  double queue_us = -1;             // accepted -> first region start; < 0 when none ran
  std::uint64_t reserved[2] = {};
};
static_assert(sizeof(CompletionEntry) == 64);

// The error text of the completion at the same position. Written before that entry is
// published; rewritten only when the position is reused, after the client consumed it.
struct RingMessage {
  char text[256] = {};
};

struct alignas(64) RingDoorbell {
  std::atomic<std::uint32_t> sequence{0};
  std::atomic<std::uint32_t> sleepers{0};
};

struct alignas(64) RingIndex {
  std::atomic<std::uint32_t> value{0};
};

struct RingHeader {
  std::uint32_t magic = kRingMagic;
  std::uint16_t version_major = kRingVersionMajor;
  std::uint16_t version_minor = kRingVersionMinor;
  std::uint32_t total_bytes = 0;
  std::uint32_t sq_capacity = 0;
  std::uint32_t cq_capacity = 0;
  std::uint32_t sq_offset = 0;
  std::uint32_t cq_offset = 0;
  std::uint32_t message_offset = 0;
  // Each index and doorbell on its own cache line: the two sides write different ones.
  RingIndex sq_head;   // accordd
  RingIndex sq_tail;   // client
  RingIndex cq_head;   // client
  RingIndex cq_tail;   // accordd
  RingDoorbell sq_bell;  // accordd's pollers sleep here
  RingDoorbell cq_bell;  // the client's waiters sleep here
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

}  // namespace accord::wire
