// libFuzzer target: a hostile client's submission ring. Each input is a little program
// run against a fresh session that has a prepared graph: raw 64-byte entries and
// entries built from the session's real handles pushed and published, arbitrary bytes
// written anywhere in the ring's memfd (header, indices, doorbells, entries), answers
// read or left to pile up, and the session channel closed while entries are pending;
// with and without the ring's optional answers (ring_layout.h, "Features").
// Afterwards accordd must have closed the session, released its descriptors, and the
// witness session must still submit and complete its graph on its own ring.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/fuzz/fuzz_daemon.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace accord;
using namespace accord::fuzz;
using Clock = std::chrono::steady_clock;

enum Action : std::uint8_t {
  kRawEntry,          // 64 input bytes as a SubmitEntry, published
  kBuiltEntry,        // an entry of a chosen opcode naming the session's real handles
  kCorruptFile,       // 1-8 input bytes written at any offset of the memfd
  kSetTail,           // the shared submission tail set near (or far from) its true value
  kReadAnswers,       // take every answer there is
  kLetItServe,        // give accordd up to 2 ms to take what was published
  kRingDoorbell,      // ring the submission doorbell without publishing anything
  kCloseChannel,      // end the session while entries may still be pending
  kActions,
};

struct Victim {
  RawSession session;
  std::unique_ptr<ClientRing> ring;
  std::byte* file = nullptr;  // a second mapping of the whole memfd, written freely
  std::size_t bytes = 0;
  std::vector<std::uint64_t> handles;  // the graph, then every submission accordd accepted
};

void read_answers(Victim& v) {
  wire::CompletionEntry answer;
  while (v.ring->answers.try_pop(answer) == wire::PopResult::Ok) {
    if (answer.opcode == static_cast<std::uint32_t>(wire::RingOp::Submit) &&
        (answer.terminal == 0 || answer.terminal == 2) && answer.status == 0 && v.handles.size() < 64)
      v.handles.push_back(answer.handle);
  }
}

std::uint64_t pick_handle(Victim& v, std::uint8_t choice) {
  if (choice >= 0xf0) return choice & 0x0f;  // small numbers that may or may not be handles
  return v.handles[choice % v.handles.size()];
}

void publish(Victim& v, const wire::SubmitEntry& entry) {
  // A full queue is the client's problem: the entry is dropped, as a real client would
  // have to wait.
  if (!v.ring->requests.try_push(entry)) read_answers(v);
}

void run(Victim& v, FuzzInput& in) {
  for (int steps = 0; !in.empty() && steps < 256; ++steps) {
    switch (static_cast<Action>(in.byte() % kActions)) {
      case kRawEntry: {
        wire::SubmitEntry entry;
        in.bytes(&entry, sizeof(entry));
        publish(v, entry);
        break;
      }
      case kBuiltEntry: {
        wire::SubmitEntry entry;
        entry.opcode = in.byte() % 7;  // 0 and 6 are not opcodes
        entry.count = in.byte() % 5;   // 4 is one too many
        entry.tag = in.byte();
        entry.handle = pick_handle(v, in.byte());
        for (std::uint64_t& p : entry.producers) p = pick_handle(v, in.byte());
        entry.offset = in.byte();
        entry.length = in.byte();
        publish(v, entry);
        break;
      }
      case kCorruptFile: {
        const std::size_t at = in.value<std::uint32_t>() % v.bytes;
        const std::size_t n = std::min<std::size_t>(1 + in.byte() % 8, v.bytes - at);
        in.bytes(v.file + at, n);
        break;
      }
      case kSetTail: {
        const auto delta = static_cast<std::int8_t>(in.byte());
        const std::uint32_t head = v.ring->ring.submissions().head->value.load(std::memory_order_acquire);
        const std::uint32_t tail = delta == -128 ? in.value<std::uint32_t>() : head + static_cast<std::uint32_t>(delta);
        v.ring->ring.submissions().tail->value.store(tail, std::memory_order_release);
        wire::ring_doorbell(*v.ring->ring.submissions().bell);
        break;
      }
      case kReadAnswers: read_answers(v); break;
      case kLetItServe: {
        const auto until = Clock::now() + std::chrono::milliseconds(2);
        const auto view = v.ring->ring.submissions();
        while (Clock::now() < until &&
               view.head->value.load(std::memory_order_acquire) != view.tail->value.load(std::memory_order_acquire))
          std::this_thread::yield();
        break;
      }
      case kRingDoorbell: wire::ring_doorbell(*v.ring->ring.submissions().bell); break;
      case kCloseChannel: v.session.channel.reset(); break;
      case kActions: break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzDaemon& daemon = FuzzDaemon::instance();
  static Witness witness(daemon);
  static const std::size_t baseline_fds = [] {
    witness.prove_alive();  // every lazily opened descriptor (gRPC's) is open by now
    return open_fd_count();
  }();

  {
    Victim v;
    v.session = daemon.open_session();
    // The answers' features from the input's length, so the seeds' actions keep their
    // meaning: combined answers (terminal 2) and quiet acknowledgements, alone or together.
    v.ring = daemon.open_ring(v.session, static_cast<std::uint64_t>(size & 3));
    v.handles.push_back(daemon.prepare_fill_graph(v.session, 0xa5));
    v.bytes = v.ring->ring.bytes();
    void* file = mmap(nullptr, v.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, v.ring->ring.fd(), 0);
    ACCORD_FUZZ_CHECK(file != MAP_FAILED, "mapping the ring's memfd a second time");
    v.file = static_cast<std::byte*>(file);
    FuzzInput in(data, size);
    run(v, in);
    munmap(file, v.bytes);
  }  // the channel closes: accordd ends the session, pending work and all

  daemon.await_sessions(1);
  witness.prove_alive();
  // The victim's ring, socket and buffer are accordd's to close once the session is gone.
  const auto until = Clock::now() + kAnswerTimeout;
  while (open_fd_count() > baseline_fds) {
    ACCORD_FUZZ_CHECK(Clock::now() < until, std::to_string(open_fd_count() - baseline_fds) +
                                                " descriptors more than before the input are still open");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return 0;
}
