// RawRing: one session's submission ring attached the way a client would, with the raw
// queues, so a robustness test writes exactly the entries a hostile or buggy client
// could and reads every answer accordd writes. Not thread-safe: one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <algorithm>

#include <catch2/catch.hpp>

#include "proto/wire/submission_ring.h"
#include "tests/robustness/robustness_fixture.h"

namespace robustness {

// One session's ring, attached as a client would, with the raw queues.
class RawRing {
 public:
  // `features`: the kRingFeature* bits to ask for (0: the ring as version 1.1 served it).
  explicit RawRing(const Session& session, std::uint64_t features = 0) {
    constexpr std::uint32_t kOpenRing = 0x51;
    REQUIRE(wire::send_payload(session.channel.get(), wire::MessageType::OpenRing, kOpenRing,
                               wire::OpenRingPayload{features})
                .ok());
    ChannelRead read = read_channel(session.channel.get());
    INFO("session channel read: " << static_cast<int>(read.kind) << " " << read.error);
    REQUIRE(read.kind == ChannelRead::Kind::Message);
    REQUIRE(read.message->type() == wire::MessageType::RingFd);
    REQUIRE(read.message->header.request_id == kOpenRing);
    auto attached = wire::SubmissionRing::attach(std::move(read.message->fd));
    INFO(attached.status().to_string());
    REQUIRE(attached.ok());
    ring_ = std::make_unique<wire::SubmissionRing>(std::move(attached).value());
    requests_ = wire::RingProducer<wire::SubmitEntry>(ring_->submissions());
    answers_ = wire::RingConsumer<wire::CompletionEntry>(ring_->completions());
  }

  void push(const wire::SubmitEntry& entry) { REQUIRE(requests_.try_push(entry)); }

  struct Answer {
    wire::CompletionEntry entry;
    std::string message;
  };
  // The next answer, or empty after `timeout`.
  std::optional<Answer> next(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      Answer answer;
      std::uint32_t position = 0;
      const wire::PopResult popped = answers_.try_pop(answer.entry, &position);
      REQUIRE(popped != wire::PopResult::Corrupt);
      if (popped == wire::PopResult::Ok) {
        answer.message = ring_->read_message(position, answer.entry.message_bytes);
        return answer;
      }
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds::zero()) return std::nullopt;
      answers_.wait(std::chrono::microseconds(50), std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(20)));
    }
  }
  // The next answer, which must come within `timeout` and answer `tag`.
  Answer expect(std::uint64_t tag, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::optional<Answer> answer = next(timeout);
    INFO("waiting for the answer to tag " << tag);
    REQUIRE(answer.has_value());
    INFO("answer: tag " << answer->entry.tag << " opcode " << answer->entry.opcode << " status "
                        << answer->entry.status << " '" << answer->message << "'");
    REQUIRE(answer->entry.tag == tag);
    return *answer;
  }

 private:
  std::unique_ptr<wire::SubmissionRing> ring_;
  wire::RingProducer<wire::SubmitEntry> requests_;
  wire::RingConsumer<wire::CompletionEntry> answers_;
};

inline wire::SubmitEntry submit_entry(std::uint64_t tag, std::uint64_t graph) {
  wire::SubmitEntry entry;
  entry.opcode = static_cast<std::uint32_t>(wire::RingOp::Submit);
  entry.tag = tag;
  entry.handle = graph;
  return entry;
}

}  // namespace robustness
