// SubmissionRing: one session's ring (ring_layout.h) mapped into this process. accordd
// creates it in a sealed memfd and passes the fd on the session channel; the client
// attaches to that fd. Each side then takes the producer and consumer of its direction:
// the client produces submissions and consumes completions, accordd the reverse.
// Thread-safety: immutable after create()/attach(); the queue views it hands out are
// single-producer, single-consumer (ring_queue.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "accord/status.h"
#include "client/api/unique_fd.h"
#include "proto/wire/ring_layout.h"
#include "proto/wire/ring_queue.h"

namespace accord::wire {

struct RingGeometry {
  std::uint32_t sq_capacity = 256;  // submissions in flight towards accordd
  std::uint32_t cq_capacity = 512;  // completions not yet taken by the client
};

class SubmissionRing {
 public:
  // accordd: a zeroed ring of `geometry` in a new memfd, mapped shared and sealed against
  // shrinking, growing and further seals. Errors: Invalid when a capacity is not a power
  // of two in [2, 65536]; Busy when the kernel is out of memory or descriptors.
  static Result<SubmissionRing> create(const RingGeometry& geometry);
  // The client: maps the ring in `fd` (accordd's memfd) after checking its header
  // against the file: magic, major version, capacities and offsets that fit the file.
  // Errors: Invalid naming the first field that does not fit; Busy as above.
  static Result<SubmissionRing> attach(UniqueFd fd);

  SubmissionRing(SubmissionRing&&) noexcept = default;
  SubmissionRing& operator=(SubmissionRing&&) noexcept = default;
  ~SubmissionRing() = default;

  // The memfd, to pass on the session channel. Borrowed.
  int fd() const noexcept { return fd_.get(); }
  const RingGeometry& geometry() const noexcept { return geometry_; }
  // The minor version the creator wrote (kRingVersionMinor for accordd's own ring): the
  // client serves leases on the ring only from minor 1 on.
  std::uint16_t version_minor() const noexcept { return version_minor_; }
  std::size_t bytes() const noexcept { return bytes_; }

  RingQueueView<SubmitEntry> submissions() const noexcept;
  RingQueueView<CompletionEntry> completions() const noexcept;

  // accordd: writes the error text of the completion that will be published at
  // `position` (RingProducer::next_position()), truncated to fit; returns the bytes
  // written, for CompletionEntry::message_bytes.
  std::uint32_t write_message(std::uint32_t position, std::string_view text) const noexcept;
  // The client: the text of the completion taken at `position`, at most `bytes` (clamped
  // to the slot, so a lying entry cannot read past it).
  std::string read_message(std::uint32_t position, std::uint32_t bytes) const;

 private:
  struct Unmap {
    std::size_t bytes = 0;
    void operator()(std::byte* address) const noexcept;
  };
  SubmissionRing(UniqueFd fd, std::unique_ptr<std::byte, Unmap> map, std::size_t bytes, RingGeometry geometry) noexcept;
  RingHeader& header() const noexcept { return *reinterpret_cast<RingHeader*>(map_.get()); }

  UniqueFd fd_;
  std::unique_ptr<std::byte, Unmap> map_;
  std::size_t bytes_ = 0;
  RingGeometry geometry_;  // this side's copy, checked once: never re-read from the mapping
  std::uint16_t version_minor_ = kRingVersionMinor;  // from the header, once, at attach()
  std::uint32_t sq_offset_ = 0;
  std::uint32_t cq_offset_ = 0;
  std::uint32_t message_offset_ = 0;
};

}  // namespace accord::wire
