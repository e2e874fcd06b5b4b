// The executor channel's memfd: created and sized by accordd, checked by the executor
// before it trusts a single offset (an executor is ours, but its input is a file).
#include "daemon/executor/executor_channel.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace accord::executor {
namespace {

constexpr std::uint32_t kAlign = 64;
constexpr std::uint32_t kMaxCapacity = 1u << 16;
constexpr std::uint32_t kPage = 4096;

std::uint32_t align_up(std::uint32_t value) { return (value + kAlign - 1) / kAlign * kAlign; }

Status system_failure(const char* call, int err) {
  std::string message = std::string("executor channel: ") + call + ": " + std::strerror(err);
  if (err == ENOMEM || err == EMFILE || err == ENFILE || err == ENOSPC) return busy_error(std::move(message));
  return internal_error(std::move(message));
}

}  // namespace

Result<ExecutorChannel> ExecutorChannel::create(std::uint32_t command_capacity, std::uint32_t completion_capacity) {
  if (command_capacity == 0 || completion_capacity == 0 || command_capacity > kMaxCapacity ||
      completion_capacity > kMaxCapacity)
    return invalid_error("executor channel: capacities must be in 1.." + std::to_string(kMaxCapacity));
  ExecutorChannel channel;
  channel.command_capacity_ = std::bit_ceil(command_capacity);
  channel.completion_capacity_ = std::bit_ceil(completion_capacity);
  channel.command_offset_ = align_up(sizeof(ChannelHeader));
  channel.completion_offset_ =
      align_up(channel.command_offset_ + channel.command_capacity_ * static_cast<std::uint32_t>(sizeof(CommandEntry)));
  channel.message_offset_ = align_up(channel.completion_offset_ +
                                     channel.completion_capacity_ * static_cast<std::uint32_t>(sizeof(CompletionRecord)));
  const std::uint32_t messages_end = channel.message_offset_ + channel.completion_capacity_ *
                                                                  static_cast<std::uint32_t>(sizeof(CompletionMessage));
  channel.echo_offset_ = (messages_end + kPage - 1) / kPage * kPage;  // mapped on its own by accordd
  const std::uint32_t total = channel.echo_offset_ + echo_bytes();
  channel.fd_ = UniqueFd(::memfd_create("accord-executor", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!channel.fd_) return system_failure("memfd_create", errno);
  if (::ftruncate(channel.fd_.get(), total) != 0) return system_failure("ftruncate", errno);
  if (::fcntl(channel.fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return system_failure("fcntl(F_ADD_SEALS)", errno);
  void* mapping = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, channel.fd_.get(), 0);
  if (mapping == MAP_FAILED) return system_failure("mmap", errno);
  channel.mapping_ = mapping;
  channel.bytes_ = total;
  // The file is zeroed by ftruncate; the header's atomics start at 0 as constructed.
  auto* header = new (mapping) ChannelHeader();
  header->total_bytes = total;
  header->command_capacity = channel.command_capacity_;
  header->completion_capacity = channel.completion_capacity_;
  header->command_offset = channel.command_offset_;
  header->completion_offset = channel.completion_offset_;
  header->message_offset = channel.message_offset_;
  header->echo_offset = channel.echo_offset_;
  channel.header_ = header;
  return channel;
}

Result<ExecutorChannel> ExecutorChannel::map(UniqueFd fd) {
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0) return invalid_error("executor channel: the passed fd is not a file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size < sizeof(ChannelHeader) || size > (std::uint64_t{64} << 20))
    return invalid_error("executor channel: a file of " + std::to_string(size) + " bytes is no channel");
  void* mapping = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mapping == MAP_FAILED) return system_failure("mmap", errno);
  ExecutorChannel channel;
  channel.fd_ = std::move(fd);
  channel.mapping_ = mapping;
  channel.bytes_ = size;
  ChannelHeader copy;
  std::memcpy(static_cast<void*>(&copy), mapping, offsetof(ChannelHeader, command_head));
  const auto fits = [&](std::uint64_t offset, std::uint64_t capacity, std::uint64_t entry) {
    return capacity > 0 && capacity <= kMaxCapacity && std::has_single_bit(capacity) && offset % kAlign == 0 &&
           offset >= sizeof(ChannelHeader) && offset + capacity * entry <= size;
  };
  if (copy.magic != kChannelMagic || copy.version != kChannelVersion || copy.total_bytes != size ||
      !fits(copy.command_offset, copy.command_capacity, sizeof(CommandEntry)) ||
      !fits(copy.completion_offset, copy.completion_capacity, sizeof(CompletionRecord)) ||
      !fits(copy.message_offset, copy.completion_capacity, sizeof(CompletionMessage)) ||
      copy.echo_offset % kPage != 0 || copy.echo_offset < sizeof(ChannelHeader) ||
      std::uint64_t{copy.echo_offset} + echo_bytes() > size)
    return invalid_error("executor channel: bad header (magic, version or geometry)");
  channel.header_ = static_cast<ChannelHeader*>(mapping);
  channel.command_capacity_ = copy.command_capacity;
  channel.completion_capacity_ = copy.completion_capacity;
  channel.command_offset_ = copy.command_offset;
  channel.completion_offset_ = copy.completion_offset;
  channel.message_offset_ = copy.message_offset;
  channel.echo_offset_ = copy.echo_offset;
  return channel;
}

ExecutorChannel::~ExecutorChannel() {
  if (mapping_ != nullptr) static_cast<void>(::munmap(mapping_, bytes_));
}

ExecutorChannel::ExecutorChannel(ExecutorChannel&& other) noexcept { *this = std::move(other); }

ExecutorChannel& ExecutorChannel::operator=(ExecutorChannel&& other) noexcept {
  if (this == &other) return *this;
  if (mapping_ != nullptr) static_cast<void>(::munmap(mapping_, bytes_));
  fd_ = std::move(other.fd_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  bytes_ = std::exchange(other.bytes_, 0);
  header_ = std::exchange(other.header_, nullptr);
  command_capacity_ = other.command_capacity_;
  completion_capacity_ = other.completion_capacity_;
  command_offset_ = other.command_offset_;
  completion_offset_ = other.completion_offset_;
  message_offset_ = other.message_offset_;
  echo_offset_ = other.echo_offset_;
  return *this;
}

wire::RingQueueView<CommandEntry> ExecutorChannel::commands() const noexcept {
  auto* base = static_cast<std::byte*>(mapping_);
  return {&header_->command_head, &header_->command_tail,
          reinterpret_cast<CommandEntry*>(base + command_offset_), command_capacity_, &header_->command_bell};
}

CompletionMessage& ExecutorChannel::completion_message(std::uint32_t position) const noexcept {
  auto* base = static_cast<std::byte*>(mapping_);
  return reinterpret_cast<CompletionMessage*>(base + message_offset_)[position & (completion_capacity_ - 1)];
}

std::atomic<std::uint32_t>* ExecutorChannel::launch_echo(std::uint32_t index) const noexcept {
  if (index >= kLaunchEchoes || mapping_ == nullptr) return nullptr;
  auto* base = static_cast<std::byte*>(mapping_) + echo_offset_ + std::size_t{index} * kLaunchEchoStride;
  return reinterpret_cast<std::atomic<std::uint32_t>*>(base);
}

wire::RingQueueView<CompletionRecord> ExecutorChannel::completions() const noexcept {
  auto* base = static_cast<std::byte*>(mapping_);
  return {&header_->completion_head, &header_->completion_tail,
          reinterpret_cast<CompletionRecord*>(base + completion_offset_), completion_capacity_,
          &header_->completion_bell};
}

}  // namespace accord::executor
