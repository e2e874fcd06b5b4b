// The shared-memory half of accordd's channel to one GPU executor (README.md, "Hot
// path"): a sealed memfd accordd creates per executor start, holding a command queue
// (launches, accordd -> executor) and a completion queue (executor -> accordd), each
// single-producer single-consumer with the ring templates and futex doorbells of
// proto/wire, so neither direction makes a system call while both sides are busy.
// Thread-safety: ExecutorChannel is immutable after create()/map(); the queues it
// hands out follow ring_queue.h (one producer and one consumer thread, or a lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "proto/wire/ring_layout.h"
#include "proto/wire/ring_queue.h"

namespace accord::executor {

inline constexpr std::uint32_t kChannelMagic = 0x58454341;  // "ACEX" little-endian
inline constexpr std::uint32_t kChannelVersion = 4;

enum class CommandOp : std::uint16_t {
  Launch = 1,     // launch `region` in `slot` after the waits in this and the `more` entries that follow
  MoreWaits = 2,  // continues the Launch before it with up to kWaitsPerEntry more waits
};

// A same-device predecessor: the executor's region id and the slot it runs in.
struct CommandWait {
  std::uint32_t region = 0;
  std::uint32_t slot = 0;
};

inline constexpr std::uint32_t kWaitsPerEntry = 5;
inline constexpr std::uint32_t kNoEcho = ~std::uint32_t{0};
// One launch echo per watched slot (CompletionWatch::kCapacity), a cache line each.
inline constexpr std::uint32_t kLaunchEchoes = 4096;
inline constexpr std::uint32_t kLaunchEchoStride = 64;

// accordd -> executor. 64 bytes: one cache line per launch without many waits.
struct CommandEntry {
  std::uint16_t opcode = 0;  // CommandOp
  std::uint16_t waits = 0;   // entries of `wait` used (<= kWaitsPerEntry)
  std::uint32_t more = 0;    // Launch: MoreWaits entries that follow
  std::uint32_t region = 0;  // Launch: the executor's region id
  std::uint32_t slot = 0;    // Launch: the submission slot
  // Launch: accordd's number for this launch of the slot (never 0), echoed in its
  // CompletionRecord: a record that arrives after accordd saw the launch end by its
  // completion word, and launched the slot again, names the old number and is dropped.
  std::uint32_t launch = 0;
  // Launch: where the executor echoes `launch` once the device's launch() returned (and
  // so had cleared the slot's completion word): an index into the channel's echo array,
  // or kNoEcho. accordd trusts a completion word only while its echo names the launch.
  std::uint32_t echo = 0;
  CommandWait wait[kWaitsPerEntry];
};
static_assert(sizeof(CommandEntry) == 64);

enum class Outcome : std::uint32_t { Done = 1, Error = 2, Cancelled = 3 };

inline constexpr std::size_t kCompletionMessageBytes = 224;

// executor -> accordd. 64 bytes, one cache line: one per Launch, naming the launch's
// region and slot (a slot has at most one launch in flight, so the pair is unambiguous).
// An error's message travels beside it, in the CompletionMessage of the same position,
// so a launch that succeeds moves one line between the processes, not four.
struct CompletionRecord {
  std::uint32_t region = 0;
  std::uint32_t slot = 0;
  std::uint32_t launch = 0;         // CommandEntry::launch of the launch that ended
  std::uint32_t outcome = 0;        // Outcome
  std::uint32_t error_kind = 0;     // Error: accord::ErrorKind
  std::uint32_t message_bytes = 0;  // Error: bytes of the position's message used
  std::uint32_t reserved[10] = {};
};
static_assert(sizeof(CompletionRecord) == 64);

struct CompletionMessage {
  char text[kCompletionMessageBytes];  // not NUL terminated
};

struct ChannelHeader {
  std::uint32_t magic = kChannelMagic;
  std::uint32_t version = kChannelVersion;
  std::uint32_t total_bytes = 0;
  std::uint32_t command_capacity = 0;
  std::uint32_t completion_capacity = 0;
  std::uint32_t command_offset = 0;
  std::uint32_t completion_offset = 0;
  std::uint32_t message_offset = 0;  // completion_capacity CompletionMessages
  std::uint32_t echo_offset = 0;     // page-aligned: kLaunchEchoes echoes, kLaunchEchoStride apart
  // Each index and doorbell on its own cache line: the two sides write different ones.
  wire::RingIndex command_head;     // executor
  wire::RingIndex command_tail;     // accordd
  wire::RingIndex completion_head;  // accordd
  wire::RingIndex completion_tail;  // executor
  wire::RingDoorbell command_bell;     // the executor's consumer sleeps here
  wire::RingDoorbell completion_bell;  // accordd's completion thread sleeps here
};

class ExecutorChannel {
 public:
  // accordd: a new zeroed memfd (close-on-exec, sealed against shrink and grow) with
  // the two queues, mapped shared. Capacities are rounded up to powers of two.
  // Busy when out of memory or descriptors; Internal for other system failures.
  static Result<ExecutorChannel> create(std::uint32_t command_capacity = 1024,
                                        std::uint32_t completion_capacity = 1024);
  // The executor: maps what accordd passed (takes `fd`), checking magic, version and
  // the geometry against the file's size before trusting any offset. Invalid otherwise.
  static Result<ExecutorChannel> map(UniqueFd fd);

  ExecutorChannel() = default;
  ~ExecutorChannel();
  ExecutorChannel(ExecutorChannel&& other) noexcept;
  ExecutorChannel& operator=(ExecutorChannel&& other) noexcept;
  ExecutorChannel(const ExecutorChannel&) = delete;
  ExecutorChannel& operator=(const ExecutorChannel&) = delete;

  int fd() const noexcept { return fd_.get(); }
  ChannelHeader& header() const noexcept { return *header_; }
  wire::RingQueueView<CommandEntry> commands() const noexcept;
  wire::RingQueueView<CompletionRecord> completions() const noexcept;
  // The error message of completion queue position `position` (< the completion
  // queue's capacity).
  CompletionMessage& completion_message(std::uint32_t position) const noexcept;
  // Launch echo `index` (CommandEntry::echo); nullptr for kNoEcho or out of range.
  std::atomic<std::uint32_t>* launch_echo(std::uint32_t index) const noexcept;
  // Where the echoes lie in the file, for a mapping of their own (page-aligned).
  std::uint32_t echo_offset() const noexcept { return echo_offset_; }
  static constexpr std::uint32_t echo_bytes() noexcept { return kLaunchEchoes * kLaunchEchoStride; }

 private:
  UniqueFd fd_;
  void* mapping_ = nullptr;
  std::size_t bytes_ = 0;
  ChannelHeader* header_ = nullptr;
  // Kept by whoever made or checked the geometry: never re-read from shared memory.
  std::uint32_t command_capacity_ = 0;
  std::uint32_t completion_capacity_ = 0;
  std::uint32_t command_offset_ = 0;
  std::uint32_t completion_offset_ = 0;
  std::uint32_t message_offset_ = 0;
  std::uint32_t echo_offset_ = 0;
};

}  // namespace accord::executor
