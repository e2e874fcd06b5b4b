// Creating and attaching a ring. The layout is computed the same way on both sides
// (ring_offsets); the client recomputes it from the capacities in the header and refuses
// a header whose offsets or size disagree, so nothing it maps later lies outside the file.
#include "proto/wire/submission_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace accord::wire {
namespace {

constexpr std::uint32_t kMaxCapacity = 65536;

struct Offsets {
  std::uint32_t sq = 0;
  std::uint32_t cq = 0;
  std::uint32_t messages = 0;
  std::uint32_t total = 0;
};

constexpr std::uint32_t align64(std::uint64_t n) { return static_cast<std::uint32_t>((n + 63) & ~std::uint64_t{63}); }

Offsets ring_offsets(const RingGeometry& g) {
  Offsets o;
  o.sq = align64(sizeof(RingHeader));
  o.cq = align64(o.sq + std::uint64_t{g.sq_capacity} * sizeof(SubmitEntry));
  o.messages = align64(o.cq + std::uint64_t{g.cq_capacity} * sizeof(CompletionEntry));
  o.total = align64(o.messages + std::uint64_t{g.cq_capacity} * sizeof(RingMessage));
  return o;
}

bool valid_capacity(std::uint32_t n) { return n >= 2 && n <= kMaxCapacity && (n & (n - 1)) == 0; }

Status system_failure(const char* call, int error) {
  std::string message = std::string("submission ring: ") + call + " failed: " + std::strerror(error);
  if (error == ENOMEM || error == EMFILE || error == ENFILE) return busy_error(std::move(message));
  return internal_error(std::move(message));
}

}  // namespace

void SubmissionRing::Unmap::operator()(std::byte* address) const noexcept {
  if (address != nullptr) static_cast<void>(::munmap(address, bytes));  // fails only for arguments we never pass
}

SubmissionRing::SubmissionRing(UniqueFd fd, std::unique_ptr<std::byte, Unmap> map, std::size_t bytes,
                               RingGeometry geometry) noexcept
    : fd_(std::move(fd)), map_(std::move(map)), bytes_(bytes), geometry_(geometry) {
  const Offsets o = ring_offsets(geometry_);
  sq_offset_ = o.sq;
  cq_offset_ = o.cq;
  message_offset_ = o.messages;
}

Result<SubmissionRing> SubmissionRing::create(const RingGeometry& geometry) {
  if (!valid_capacity(geometry.sq_capacity) || !valid_capacity(geometry.cq_capacity))
    return invalid_error("submission ring: capacities must be powers of two in [2, 65536], not " +
                         std::to_string(geometry.sq_capacity) + " and " + std::to_string(geometry.cq_capacity));
  const Offsets o = ring_offsets(geometry);
  UniqueFd fd(::memfd_create("accord-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_failure("memfd_create", errno);
  if (::ftruncate(fd.get(), o.total) != 0) return system_failure("ftruncate", errno);
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return system_failure("sealing the memfd", errno);
  void* address = ::mmap(nullptr, o.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (address == MAP_FAILED) return system_failure("mmap", errno);
  std::unique_ptr<std::byte, Unmap> map(static_cast<std::byte*>(address), Unmap{o.total});
  // The file is zeroed; constructing the header there starts the atomics' lifetimes.
  auto* header = new (address) RingHeader();
  header->total_bytes = o.total;
  header->sq_capacity = geometry.sq_capacity;
  header->cq_capacity = geometry.cq_capacity;
  header->sq_offset = o.sq;
  header->cq_offset = o.cq;
  header->message_offset = o.messages;
  return SubmissionRing(std::move(fd), std::move(map), o.total, geometry);
}

Result<SubmissionRing> SubmissionRing::attach(UniqueFd fd) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_failure("fstat", errno);
  if (st.st_size < static_cast<off_t>(sizeof(RingHeader)))
    return invalid_error("submission ring: the file has " + std::to_string(st.st_size) +
                         " bytes, less than a header");
  const int seals = ::fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
    return invalid_error("submission ring: the file is not sealed against shrinking and growing");
  RingHeader copy;
  if (::pread(fd.get(), &copy, sizeof copy, 0) != static_cast<ssize_t>(sizeof copy))
    return system_failure("reading the header", errno);
  if (copy.magic != kRingMagic) return invalid_error("submission ring: bad magic");
  if (copy.version_major != kRingVersionMajor)
    return invalid_error("submission ring: version " + std::to_string(copy.version_major) + "." +
                         std::to_string(copy.version_minor) + ", this side speaks " +
                         std::to_string(kRingVersionMajor) + ".x");
  const RingGeometry geometry{copy.sq_capacity, copy.cq_capacity};
  if (!valid_capacity(geometry.sq_capacity) || !valid_capacity(geometry.cq_capacity))
    return invalid_error("submission ring: capacities " + std::to_string(geometry.sq_capacity) + " and " +
                         std::to_string(geometry.cq_capacity) + " are not powers of two in [2, 65536]");
  const Offsets o = ring_offsets(geometry);
  if (copy.sq_offset != o.sq || copy.cq_offset != o.cq || copy.message_offset != o.messages ||
      copy.total_bytes != o.total || static_cast<std::uint64_t>(st.st_size) < o.total)
    return invalid_error("submission ring: offsets or size do not match capacities " +
                         std::to_string(geometry.sq_capacity) + " and " + std::to_string(geometry.cq_capacity));
  void* address = ::mmap(nullptr, o.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (address == MAP_FAILED) return system_failure("mmap", errno);
  std::unique_ptr<std::byte, Unmap> map(static_cast<std::byte*>(address), Unmap{o.total});
  SubmissionRing attached(std::move(fd), std::move(map), o.total, geometry);
  attached.version_minor_ = copy.version_minor;
  return attached;
}

RingQueueView<SubmitEntry> SubmissionRing::submissions() const noexcept {
  RingHeader& h = header();
  return {&h.sq_head, &h.sq_tail, reinterpret_cast<SubmitEntry*>(map_.get() + sq_offset_), geometry_.sq_capacity,
          &h.sq_bell};
}

RingQueueView<CompletionEntry> SubmissionRing::completions() const noexcept {
  RingHeader& h = header();
  return {&h.cq_head, &h.cq_tail, reinterpret_cast<CompletionEntry*>(map_.get() + cq_offset_),
          geometry_.cq_capacity, &h.cq_bell};
}

std::uint32_t SubmissionRing::write_message(std::uint32_t position, std::string_view text) const noexcept {
  auto* slot = reinterpret_cast<RingMessage*>(map_.get() + message_offset_) + (position & (geometry_.cq_capacity - 1));
  const std::size_t n = std::min(text.size(), sizeof(slot->text));
  std::memcpy(slot->text, text.data(), n);
  return static_cast<std::uint32_t>(n);
}

std::string SubmissionRing::read_message(std::uint32_t position, std::uint32_t bytes) const {
  const auto* slot =
      reinterpret_cast<const RingMessage*>(map_.get() + message_offset_) + (position & (geometry_.cq_capacity - 1));
  return std::string(slot->text, std::min<std::size_t>(bytes, sizeof(slot->text)));
}

}  // namespace accord::wire
