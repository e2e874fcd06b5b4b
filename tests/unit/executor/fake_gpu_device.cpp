// The fake GPU: two worker threads take launches in order; a launch waits for its native
// predecessors (by their launch count per slot, as CUDA events would) before it runs.
#include "tests/unit/executor/fake_gpu_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "daemon/devices/common/memfd_pages.h"

namespace accord::testing {
namespace {

enum class Builtin { AddOne, AddF32, SleepMs, SleepUs, Fail, Fault, Die };

// What the conformance suite's sleep_us writes once it has slept.
constexpr std::uint32_t kSleepMarker = 0x5EE9D0E5u;

class FakeCode final : public devices::LoadedCode {
 public:
  FakeCode(std::string name, KernelContract contract, Builtin builtin, std::uint32_t constant)
      : name_(std::move(name)), contract_(std::move(contract)), kind(builtin), ms(constant) {}
  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }

 private:
  std::string name_;
  KernelContract contract_;

 public:
  const Builtin kind;
  const std::uint32_t ms;  // sleep_ms: milliseconds; sleep_us: microseconds; add_f32: count
};

class FakeView final : public devices::AdmittedMemory {
 public:
  explicit FakeView(std::uint64_t address) : address_(address) {}
  std::uint64_t device_address() const noexcept override { return address_; }

 private:
  std::uint64_t address_;
};

// Another fake GPU's memory, met as the fd its executor exported (a memfd here, where
// CUDA has a VMM handle): mapped for as long as the admission lives, as an import is.
class FakeImport final : public devices::AdmittedMemory {
 public:
  static Result<std::unique_ptr<FakeImport>> map(int fd, std::size_t bytes, const std::string& who) {
    void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) return invalid_error(who + ": cannot map the exported fd " + std::to_string(fd));
    return std::unique_ptr<FakeImport>(new FakeImport(address, bytes));
  }
  ~FakeImport() override { ::munmap(address_, bytes_); }
  std::uint64_t device_address() const noexcept override { return reinterpret_cast<std::uint64_t>(address_); }

 private:
  FakeImport(void* address, std::size_t bytes) : address_(address), bytes_(bytes) {}
  void* address_;
  std::size_t bytes_;
};

struct Task {
  devices::OpKind kind = devices::OpKind::Fill;
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::array<std::byte*, 3> args{};  // kernels: the bindings in contract order
  std::size_t bytes = 0;
  std::uint8_t fill = 0;
  const FakeCode* code = nullptr;
};

struct FakeRegion final : devices::NativeRegion {
  std::vector<Task> tasks;
  std::vector<std::uint64_t> launched;  // per slot, guarded by the device's mutex
  std::vector<std::uint64_t> finished;
  // Completion words (fake.words): per slot, in the device's word memfd, as CUDA's flags.
  std::vector<std::uint64_t> word_offsets;
  std::vector<std::atomic<std::uint32_t>*> words;

  std::optional<std::uint64_t> completion_word(std::uint32_t slot) const noexcept override {
    if (slot >= word_offsets.size()) return std::nullopt;
    return word_offsets[slot];
  }
  // As CUDA's flags (cuda_flags.h): done, or released by a failure (only the report says
  // how it failed; accordd must not take the word for done).
  static std::uint32_t word_after(const Status& result) noexcept {
    return result.ok() ? devices::kCompletionWordDone : 2;
  }
  void set_word(std::uint32_t slot, std::uint32_t value) const noexcept {
    if (slot < words.size()) words[slot]->store(value, std::memory_order_release);
  }
};

std::byte* at(const devices::OperationBinding& b) {
  return reinterpret_cast<std::byte*>(b.address) + b.offset;
}

class FakeGpu final : public devices::Device {
 public:
  FakeGpu(int ordinal, bool run_inline, bool polling, bool words, std::chrono::microseconds report_delay)
      : report_delay_(report_delay), inline_(run_inline), polling_(polling) {
    if (words) {
      auto pages = devices::common::MemfdPages::create(kWordBytes, "fake completion words");
      if (pages.ok()) words_ = std::move(pages).value();
    }
    info_.kind = DeviceKind::Gpu;
    info_.ordinal = ordinal;
    info_.backend = "fake";
    info_.name = "fake:" + std::to_string(ordinal) + " (Fake GPU)";
    info_.target = "fake_sm";
    info_.memory_bytes = std::uint64_t{1} << 30;
    info_.uuid = "GPU-fake-" + std::to_string(ordinal);
    if (!inline_)
      for (int i = 0; i < 2; ++i) workers_.emplace_back([this] { work(); });
  }
  ~FakeGpu() override { shut_down(); }

  const devices::DeviceInfo& info() const noexcept override { return info_; }
  std::span<const LaneKind> lanes() const noexcept override { return lanes_; }
  bool supports(MemoryPlacement p) const noexcept override { return p == MemoryPlacement::gpu_local(info_.ordinal); }
  bool waits_natively() const noexcept override { return true; }
  bool launches_synchronously() const noexcept override { return inline_; }
  bool completes_by_polling() const noexcept override { return polling_; }
  // Polling mode: launches that ended wait in `done_` until someone polls (as CUDA's
  // completion flags wait for a sweep).
  void poll_completions() noexcept override {
    if (!polling_) return;
    std::lock_guard report(report_mu_);
    std::deque<Finished> finished;
    {
      std::lock_guard lock(mu_);
      finished.swap(done_);
    }
    for (Finished& f : finished) {
      if (f.result.ok()) f.sink->on_done();
      else f.sink->on_error(std::move(f.result));
    }
  }
  std::uint64_t free_memory() const noexcept override { return info_.memory_bytes / 2; }
  int completion_word_fd() const noexcept override { return words_ ? words_->export_fd() : -1; }

  Result<std::unique_ptr<devices::DeviceMemory>> allocate(const devices::AllocationRequest& request) override {
    if (request.bytes == 0) return invalid_error(info_.name + ": 0 bytes");
    if (!supports(request.placement)) return unsupported_error(info_.name + " is not the home of " + request.placement.to_string());
    ACCORD_ASSIGN_OR_RETURN(auto pages, devices::common::MemfdPages::create(request.bytes, "fake GPU memory"));
    return std::unique_ptr<devices::DeviceMemory>(std::move(pages));
  }
  Result<std::unique_ptr<devices::AdmittedMemory>> admit(const devices::DeviceMemory& memory,
                                                         const devices::DeviceInfo& home) override {
    if (memory.host_address() == nullptr && home.kind == DeviceKind::Gpu && memory.export_fd() >= 0) {
      ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<FakeImport> imported,
                              FakeImport::map(memory.export_fd(), memory.bytes(), info_.name));
      return std::unique_ptr<devices::AdmittedMemory>(std::move(imported));
    }
    if (memory.host_address() == nullptr) return unsupported_error(info_.name + " cannot reach memory of " + home.name);
    // A real GPU's memory is never host mapped: GPU memory that arrives as mapped pages
    // was sent as the wrong kind of admission (ExecutorServer maps only HostPages).
    if (home.kind == DeviceKind::Gpu)
      return invalid_error(info_.name + ": memory of " + home.name + " arrived mapped, not as its export");
    return std::unique_ptr<devices::AdmittedMemory>(new FakeView(reinterpret_cast<std::uint64_t>(memory.host_address())));
  }
  Result<std::unique_ptr<devices::LoadedCode>> load(const devices::CodeImage& image,
                                                    const KernelContract& contract) override {
    Builtin kind;
    std::size_t bindings = 0;
    std::vector<Access> accesses;  // checked when not empty
    std::size_t constants = 0;
    if (image.name == "fake.add_one") kind = Builtin::AddOne, bindings = 2;
    else if (image.name == "fake.add_f32")
      kind = Builtin::AddF32, bindings = 3, accesses = {Access::Read, Access::Read, Access::Write}, constants = 4;
    else if (image.name == "fake.sleep_ms") kind = Builtin::SleepMs, constants = 4;
    else if (image.name == "fake.sleep_us")
      kind = Builtin::SleepUs, bindings = 1, accesses = {Access::ReadWrite}, constants = 4;
    else if (image.name == "fake.fail") kind = Builtin::Fail, bindings = contract.bindings.size() > 0 ? 1 : 0;
    else if (image.name == "fake.fault") kind = Builtin::Fault, bindings = contract.bindings.size() > 0 ? 1 : 0;
    else if (image.name == "fake.die") kind = Builtin::Die;
    else if (image.name == "fake.hang_load") {
      // A driver call that never returns: accordd's request timeout must notice.
      std::this_thread::sleep_for(std::chrono::hours(1));
      return internal_error("unreachable");
    } else return unsupported_error(info_.name + ": unknown kernel '" + image.name + "'");
    if (contract.bindings.size() != bindings)
      return invalid_error(info_.name + ": kernel '" + image.name + "' takes " + std::to_string(bindings) + " bindings");
    for (std::size_t i = 0; i < accesses.size(); ++i)
      if (contract.bindings[i].access != accesses[i])
        return invalid_error(info_.name + ": kernel '" + image.name + "' binding " + std::to_string(i) +
                             " has the wrong access");
    if (contract.constants.size() != constants)
      return invalid_error(info_.name + ": kernel '" + image.name + "' takes " + std::to_string(constants) +
                           " bytes of constants");
    std::uint32_t constant = 0;
    if (constants == 4) std::memcpy(&constant, contract.constants.data(), 4);
    return std::unique_ptr<devices::LoadedCode>(new FakeCode(image.name, contract, kind, constant));
  }
  Result<std::unique_ptr<devices::NativeRegion>> lower(const devices::RegionRequest& request) override {
    auto region = std::make_unique<FakeRegion>();
    for (const devices::Operation& op : request.operations) {
      if (std::find(lanes_.begin(), lanes_.end(), op.lane) == lanes_.end())
        return invalid_error(info_.name + " has no " + std::string(to_string(op.lane)) + " lane");
      Task t;
      t.kind = op.kind;
      t.fill = op.fill_value;
      if (!op.bindings.empty()) {
        t.dst = at(op.bindings[0]);
        t.bytes = op.bindings[0].length;
      }
      if (op.bindings.size() > 1) t.src = at(op.bindings[1]);
      for (std::size_t i = 0; i < op.bindings.size() && i < t.args.size(); ++i) t.args[i] = at(op.bindings[i]);
      if (op.kind == devices::OpKind::Kernel) {
        t.code = dynamic_cast<const FakeCode*>(op.code);
        if (t.code == nullptr) return invalid_error(info_.name + ": node " + std::to_string(op.node) + ": foreign code");
      }
      region->tasks.push_back(t);
    }
    region->launched.assign(request.slots, 0);
    region->finished.assign(request.slots, 0);
    if (words_) {
      std::lock_guard lock(mu_);
      for (std::uint32_t slot = 0; slot < request.slots && next_word_ + kWordStride <= kWordBytes; ++slot) {
        region->word_offsets.push_back(next_word_);
        region->words.push_back(reinterpret_cast<std::atomic<std::uint32_t>*>(words_->host_address() + next_word_));
        next_word_ += kWordStride;
      }
      if (region->word_offsets.size() != request.slots) region->word_offsets.clear(), region->words.clear();
    }
    return std::unique_ptr<devices::NativeRegion>(std::move(region));
  }

  void launch(devices::NativeRegion& native, const devices::RegionWaits& waits,
              devices::CompletionSink& sink) noexcept override {
    auto& region = static_cast<FakeRegion&>(native);
    region.set_word(waits.slot, 0);
    if (inline_) {
      // Synchronous: predecessors have all completed (they ran inline too).
      Status result = run(Item{&region, waits.slot, {}, &sink});
      region.set_word(waits.slot, FakeRegion::word_after(result));
      if (result.ok()) sink.on_done();
      else sink.on_error(std::move(result));
      return;
    }
    std::unique_lock lock(mu_);
    if (lost_ || stopping_) {
      lock.unlock();
      sink.on_error(device_lost_error(info_.name + " is lost"));
      return;
    }
    Item item{&region, waits.slot, {}, &sink};
    for (const devices::RegionWait& w : waits.predecessors) {
      const auto& before = static_cast<const FakeRegion&>(*w.region);
      if (item.count < item.waits.size()) item.waits[item.count++] = {&before, w.slot, before.launched[w.slot]};
    }
    ++region.launched[waits.slot];
    queue_.push_back(item);
    cv_.notify_all();
  }

  void shut_down() noexcept override {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  struct Wait {
    const FakeRegion* region = nullptr;
    std::uint32_t slot = 0;
    std::uint64_t target = 0;  // the predecessor's launch count in `slot` when we launched
  };
  struct Finished {
    devices::CompletionSink* sink = nullptr;
    Status result;
  };
  struct Item {
    FakeRegion* region = nullptr;
    std::uint32_t slot = 0;
    std::array<Wait, 16> waits{};
    devices::CompletionSink* sink = nullptr;
    std::size_t count = 0;
  };

  bool ready(const Item& item) const {
    for (std::size_t i = 0; i < item.count; ++i)
      if (item.waits[i].region->finished[item.waits[i].slot] < item.waits[i].target) return false;
    return true;
  }

  void work() {
    std::unique_lock lock(mu_);
    for (;;) {
      // The oldest item whose predecessors are done: FIFO otherwise.
      auto next = queue_.end();
      cv_.wait(lock, [&] {
        if (stopping_) return true;
        next = std::find_if(queue_.begin(), queue_.end(), [&](const Item& i) { return ready(i); });
        return next != queue_.end();
      });
      if (stopping_) return;
      Item item = *next;
      queue_.erase(next);
      lock.unlock();
      Status result = run(item);
      {
        // Reports follow execution order: a successor released by `finished` below
        // reports only after this report returned (as a GPU's completion sweep would).
        std::lock_guard report(report_mu_);
        lock.lock();
        ++item.region->finished[item.slot];
        const bool lost = lost_;
        lock.unlock();
        cv_.notify_all();
        if (result.ok() && lost) result = device_lost_error(info_.name + " was lost while the launch ran");
        item.region->set_word(item.slot, FakeRegion::word_after(result));
        // fake.report_delay_us: the word says done well before the sink is told.
        if (report_delay_.count() > 0) std::this_thread::sleep_for(report_delay_);
        if (polling_) {
          std::lock_guard done(mu_);
          done_.push_back({item.sink, std::move(result)});
        } else if (result.ok()) {
          item.sink->on_done();
        } else {
          item.sink->on_error(std::move(result));
        }
      }
      if (faulted_here_.exchange(false)) fault_rest();
      lock.lock();
    }
  }

  Status run(const Item& item) {
    for (const Task& t : item.region->tasks) {
      switch (t.kind) {
        case devices::OpKind::Fill: std::memset(t.dst, t.fill, t.bytes); break;
        case devices::OpKind::Copy: std::memmove(t.dst, t.src, t.bytes); break;
        case devices::OpKind::Kernel:
          switch (t.code->kind) {
            case Builtin::AddOne:
              for (std::size_t i = 0; i + 4 <= t.bytes; i += 4) {
                std::uint32_t v = 0;
                std::memcpy(&v, t.src + i, 4);
                ++v;
                std::memcpy(t.dst + i, &v, 4);
              }
              break;
            case Builtin::AddF32:
              for (std::uint32_t i = 0; i < t.code->ms; ++i) {
                float a = 0, b = 0;
                std::memcpy(&a, t.args[0] + 4 * i, 4);
                std::memcpy(&b, t.args[1] + 4 * i, 4);
                const float sum = a + b;
                std::memcpy(t.args[2] + 4 * i, &sum, 4);
              }
              break;
            case Builtin::SleepMs: std::this_thread::sleep_for(std::chrono::milliseconds(t.code->ms)); break;
            case Builtin::SleepUs:
              std::this_thread::sleep_for(std::chrono::microseconds(t.code->ms));
              std::memcpy(t.args[0], &kSleepMarker, 4);
              break;
            case Builtin::Fail: return execution_error(info_.name + ": fake.fail failed as asked");
            case Builtin::Die: ::_exit(57);
            case Builtin::Fault: {
              std::lock_guard lock(mu_);
              lost_ = true;
              faulted_here_.store(true);
              return execution_error(info_.name + ": fake.fault: an illegal memory access was encountered");
            }
          }
          break;
      }
    }
    return Status();
  }

  // After the faulting region reported: everything still queued is lost, then the device.
  void fault_rest() {
    std::deque<Item> rest;
    {
      std::lock_guard lock(mu_);
      rest.swap(queue_);
    }
    for (Item& item : rest) item.sink->on_error(device_lost_error(info_.name + " is lost (sticky fault)"));
    report_lost(device_lost_error(info_.name + ": sticky error: fake.fault: an illegal memory access was encountered"));
  }

  static constexpr std::size_t kWordBytes = 64 * 1024;
  static constexpr std::size_t kWordStride = 64;
  std::unique_ptr<devices::common::MemfdPages> words_;  // fake.words: the completion words
  std::size_t next_word_ = 0;                            // guarded by mu_; words are not reused
  const std::chrono::microseconds report_delay_;        // between setting a word and reporting

  const bool inline_;   // run launches on the calling thread (no workers)
  const bool polling_;  // report only from poll_completions()
  std::deque<Finished> done_;  // polling mode; guarded by mu_
  devices::DeviceInfo info_;
  std::vector<LaneKind> lanes_{LaneKind::Upload, LaneKind::Compute, LaneKind::Download};
  std::mutex mu_;
  std::mutex report_mu_;  // held across finishing a launch and reporting it
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool lost_ = false;
  bool stopping_ = false;
  std::atomic<bool> faulted_here_{false};
  std::vector<std::thread> workers_;
};

Result<int> parse_int(const std::string& key, const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0)
    return invalid_error("fake: option " + key + " = '" + text + "' is not a non-negative integer");
  return value;
}

Result<std::vector<std::unique_ptr<devices::Device>>> open_fake(const devices::BackendRequest& request) {
  int count = 2;
  int only = -1;
  int run_inline = 0;
  int polling = 0;
  int words = 0;
  int report_delay_us = 0;
  for (const auto& [key, value] : request.settings.options) {
    if (!key.starts_with("fake.")) continue;
    if (key == "fake.devices") {
      ACCORD_ASSIGN_OR_RETURN(count, parse_int(key, value));
    } else if (key == "fake.ordinal") {
      ACCORD_ASSIGN_OR_RETURN(only, parse_int(key, value));
    } else if (key == "fake.polling") {
      ACCORD_ASSIGN_OR_RETURN(polling, parse_int(key, value));
    } else if (key == "fake.report_delay_us") {
      ACCORD_ASSIGN_OR_RETURN(report_delay_us, parse_int(key, value));
    } else if (key == "fake.words") {
      ACCORD_ASSIGN_OR_RETURN(words, parse_int(key, value));
    } else if (key == "fake.inline") {
      ACCORD_ASSIGN_OR_RETURN(run_inline, parse_int(key, value));
    } else if (key == "fake.fail") {
      return unsupported_error(value);
    } else {
      return invalid_error("fake: unknown option '" + key + "'");
    }
  }
  std::vector<std::unique_ptr<devices::Device>> devices;
  for (int i = 0; i < count; ++i)
    if (only < 0 || only == i) devices.push_back(make_fake_gpu(i, run_inline != 0, polling != 0, words != 0,
                                                                  std::chrono::microseconds(report_delay_us)));
  return devices;
}

}  // namespace

std::unique_ptr<devices::Device> make_fake_gpu(int ordinal, bool run_inline, bool polling, bool words,
                                               std::chrono::microseconds report_delay) {
  return std::make_unique<FakeGpu>(ordinal, run_inline, polling, words, report_delay);
}

void register_fake(devices::BackendCatalog& catalog) { catalog.add("fake", &open_fake); }

}  // namespace accord::testing
