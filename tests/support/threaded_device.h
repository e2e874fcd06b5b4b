// A test-only accelerator that runs regions on its own threads (one per lane) and
// reports completion from them, as CUDA and Level Zero backends do. It has device-local
// memory the host cannot map (or, as an NPU, host-mapped Shared memory), admits host
// memory and peers' memory, optionally honours RegionWaits natively, and can be held,
// lost or left hanging on command. It records launches, starts and ends in order, so
// tests assert exact orderings without sleeping. Thread-safety: every member is
// thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::testing {

struct ThreadedDeviceOptions {
  devices::DeviceKind kind = devices::DeviceKind::Gpu;  // Gpu or Npu
  int ordinal = 0;
  bool native_waits = true;
  std::size_t granularity = 1;  // allocations are rounded up to this (GPU: 2 MiB)
  bool peers = true;            // reaches other threaded devices' memory (a peer path)
};

class ThreadedDevice final : public devices::Device {
 public:
  enum class EventKind { Launch, Start, End };
  struct Event {
    EventKind kind;
    int tag;            // the region's tag: its lowering order on this device
    std::uint64_t seq;  // order across every ThreadedDevice of the process
  };
  // The tag of a region this device lowered.
  static int tag(const devices::NativeRegion& region) { return static_cast<const Region&>(region).tag; }

  explicit ThreadedDevice(ThreadedDeviceOptions options = {}) : options_(options) {
    info_.kind = options.kind;
    info_.ordinal = options.ordinal;
    info_.backend = "threaded";
    info_.name = "threaded " + info_.id().to_string();
    info_.target = "test";
    if (options.kind == devices::DeviceKind::Npu) lanes_ = {LaneKind::Npu};
    else lanes_ = {LaneKind::Upload, LaneKind::Compute, LaneKind::Download};
    for (LaneKind lane : lanes_) threads_.emplace(lane, std::thread([this, lane] { lane_loop(lane); }));
  }
  ~ThreadedDevice() override { shut_down(); }

  const devices::DeviceInfo& info() const noexcept override { return info_; }
  std::span<const LaneKind> lanes() const noexcept override { return lanes_; }
  bool supports(MemoryPlacement p) const noexcept override {
    if (p.home() != info_.id()) return false;
    return options_.kind == devices::DeviceKind::Gpu ? p.kind() == MemoryPlacement::Kind::GpuLocal
                                                     : p.kind() != MemoryPlacement::Kind::GpuLocal;
  }
  bool waits_natively() const noexcept override { return options_.native_waits; }
  bool launches_synchronously() const noexcept override { return false; }

  Result<std::unique_ptr<devices::DeviceMemory>> allocate(const devices::AllocationRequest& r) override {
    if (!supports(r.placement)) return unsupported_error(info_.name + " does not hold " + r.placement.to_string());
    const std::size_t g = options_.granularity;
    const std::size_t granted = (r.bytes + g - 1) / g * g;
    const bool mapped = r.placement.host_mapped();
    return std::unique_ptr<devices::DeviceMemory>(new Memory(granted, mapped));
  }

  // Host-mapped memory is reachable as it is; so is another threaded device's memory
  // (a peer) unless the options say there is no peer path. Anything else is Unsupported.
  Result<std::unique_ptr<devices::AdmittedMemory>> admit(const devices::DeviceMemory& memory,
                                                         const devices::DeviceInfo& home) override {
    if (memory.host_address() == nullptr && home.backend != "threaded")
      return unsupported_error(info_.name + " cannot reach memory of " + home.name);
    if (memory.host_address() == nullptr && !options_.peers)
      return unsupported_error(info_.name + " cannot reach memory of " + home.name + ": no peer path");
    admissions_.fetch_add(1);
    return std::unique_ptr<devices::AdmittedMemory>(new View(memory.device_address()));
  }

  // One kernel: "test.increment" (binding 0 written with binding 1's bytes plus one).
  Result<std::unique_ptr<devices::LoadedCode>> load(const devices::CodeImage& image,
                                                    const KernelContract& contract) override {
    if (image.name != "test.increment") return unsupported_error("unknown kernel '" + image.name + "'");
    if (contract.bindings.size() != 2 || contract.bindings[0].access != Access::Write ||
        contract.bindings[1].access != Access::Read)
      return invalid_error("test.increment takes (write, read)");
    return std::unique_ptr<devices::LoadedCode>(new Code(image.name, contract));
  }

  Result<std::unique_ptr<devices::NativeRegion>> lower(const devices::RegionRequest& request) override {
    auto region = std::make_unique<Region>();
    {
      std::lock_guard lock(mu_);
      region->tag = next_tag_++;
    }
    region->edges.assign(request.edges.begin(), request.edges.end());
    {
      std::lock_guard lock(mu_);
      edges_[region->tag] = region->edges;
    }
    region->slots = request.slots;
    for (const devices::Operation& op : request.operations) {
      if (std::find(lanes_.begin(), lanes_.end(), op.lane) == lanes_.end())
        return invalid_error(info_.name + " has no " + std::string(to_string(op.lane)) + " lane");
      region->lane = op.lane;
      Task t;
      t.kind = op.kind;
      t.fill = op.fill_value;
      t.dst = reinterpret_cast<std::byte*>(op.bindings[0].address) + op.bindings[0].offset;
      t.bytes = op.bindings[0].length;
      if (op.bindings.size() > 1) t.src = reinterpret_cast<const std::byte*>(op.bindings[1].address) + op.bindings[1].offset;
      region->tasks.push_back(t);
    }
    region->done.assign(request.slots, 0);
    region->launched.assign(request.slots, 0);
    return std::unique_ptr<devices::NativeRegion>(std::move(region));
  }

  void launch(devices::NativeRegion& native, const devices::RegionWaits& waits,
              devices::CompletionSink& sink) noexcept override {
    auto& region = static_cast<Region&>(native);
    Item item{&region, waits.slot, {}, &sink};
    {
      std::lock_guard lock(mu_);
      // A native wait is on the predecessor's latest launch in that slot.
      for (const devices::RegionWait& w : waits.predecessors) {
        const auto& before = static_cast<const Region&>(*w.region);
        item.waits.push_back({&before, w.slot, before.launched[w.slot]});
      }
      ++region.launched[waits.slot];
      events_.push_back({EventKind::Launch, region.tag, next_seq()});
      queues_[region.lane].push_back(std::move(item));
    }
    cv_.notify_all();
  }

  void shut_down() noexcept override {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& [lane, thread] : threads_) thread.join();
  }

  // --- test controls ---
  // While held, lane threads start nothing.
  void hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  // Reports loss; queued and later regions end with DeviceLost.
  void lose(const std::string& cause) {
    {
      std::lock_guard lock(mu_);
      lost_ = true;
    }
    cv_.notify_all();
    report_lost(device_lost_error(cause));
  }
  // Comes back after lose(), as a restarted GPU executor does: new work runs again.
  void recover(const std::string& how) {
    {
      std::lock_guard lock(mu_);
      lost_ = false;
    }
    report_recovered(how);
  }
  std::vector<Event> events() {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::size_t launches() {
    std::lock_guard lock(mu_);
    return static_cast<std::size_t>(std::count_if(events_.begin(), events_.end(),
                                                  [](const Event& e) { return e.kind == EventKind::Launch; }));
  }
  // Waits (5 s at most) until `n` regions were launched.
  bool wait_launches(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] {
      return static_cast<std::size_t>(std::count_if(events_.begin(), events_.end(), [](const Event& e) {
               return e.kind == EventKind::Launch;
             })) >= n;
    });
  }
  // Process-wide sequence number of the first event of `kind` for region `tag`, or 0.
  std::uint64_t seq(EventKind kind, int tag) {
    std::lock_guard lock(mu_);
    for (const Event& e : events_)
      if (e.kind == kind && e.tag == tag) return e.seq;
    return 0;
  }
  // Edges region `tag` was lowered with.
  std::vector<devices::OperationEdge> edges_of(int tag) {
    std::lock_guard lock(mu_);
    return edges_.count(tag) ? edges_[tag] : std::vector<devices::OperationEdge>{};
  }
  std::size_t admissions() const { return admissions_.load(); }

 private:
  struct Memory final : devices::DeviceMemory {
    Memory(std::size_t n, bool mapped) : bytes_(n), mapped_(mapped), data_(new std::byte[n]()) {}
    std::size_t bytes() const noexcept override { return bytes_; }
    std::byte* host_address() const noexcept override { return mapped_ ? data_.get() : nullptr; }
    std::uint64_t device_address() const noexcept override { return reinterpret_cast<std::uint64_t>(data_.get()); }
    int export_fd() const noexcept override { return -1; }
    std::size_t bytes_;
    bool mapped_;
    std::unique_ptr<std::byte[]> data_;
  };
  struct View final : devices::AdmittedMemory {
    explicit View(std::uint64_t a) : address(a) {}
    std::uint64_t device_address() const noexcept override { return address; }
    std::uint64_t address;
  };
  struct Code final : devices::LoadedCode {
    Code(std::string name, KernelContract contract) : name_(std::move(name)), contract_(std::move(contract)) {}
    const std::string& name() const noexcept override { return name_; }
    const KernelContract& contract() const noexcept override { return contract_; }
    std::string name_;
    KernelContract contract_;
  };
  struct Task {
    devices::OpKind kind = devices::OpKind::Fill;
    std::uint8_t fill = 0;
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    std::size_t bytes = 0;
  };
  struct Region final : devices::NativeRegion {
    int tag = 0;
    LaneKind lane = LaneKind::Compute;
    std::uint32_t slots = 1;
    std::vector<Task> tasks;
    std::vector<devices::OperationEdge> edges;
    std::vector<std::uint64_t> launched, done;  // per slot; device mutex
  };
  struct Wait {
    const Region* region;
    std::uint32_t slot;
    std::uint64_t target;  // done count that satisfies it
  };
  struct Item {
    Region* region;
    std::uint32_t slot;
    std::vector<Wait> waits;
    devices::CompletionSink* sink;
  };

  static std::uint64_t next_seq() {
    static std::atomic<std::uint64_t> seq{1};
    return seq.fetch_add(1);
  }

  static void run(const Region& region) {
    for (const Task& t : region.tasks) {
      switch (t.kind) {
        case devices::OpKind::Fill: std::memset(t.dst, t.fill, t.bytes); break;
        case devices::OpKind::Copy: std::memmove(t.dst, t.src, t.bytes); break;
        case devices::OpKind::Kernel:
          for (std::size_t i = 0; i < t.bytes; ++i) t.dst[i] = static_cast<std::byte>(static_cast<std::uint8_t>(t.src[i]) + 1);
          break;
      }
    }
  }

  void lane_loop(LaneKind lane) {
    std::unique_lock lock(mu_);
    for (;;) {
      auto& queue = queues_[lane];
      // A native wait holds this lane until the predecessor's launch has ended.
      auto ready = [&] {
        if (stopping_) return true;
        if (queue.empty()) return false;
        if (lost_) return true;
        if (held_) return false;
        for (const Wait& w : queue.front().waits)
          if (w.region->done[w.slot] < w.target) return false;
        return true;
      };
      cv_.wait(lock, ready);
      if (stopping_) return;  // abandoned: queued regions are never reported
      Item item = std::move(queue.front());
      queue.pop_front();
      if (lost_) {
        lock.unlock();
        item.sink->on_error(device_lost_error(info_.name + " is lost"));
        lock.lock();
        continue;
      }
      events_.push_back({EventKind::Start, item.region->tag, next_seq()});
      lock.unlock();
      run(*item.region);
      lock.lock();
      events_.push_back({EventKind::End, item.region->tag, next_seq()});
      ++item.region->done[item.slot];
      cv_.notify_all();
      lock.unlock();
      item.sink->on_done();  // may destroy the region's graph
      lock.lock();
    }
  }

  ThreadedDeviceOptions options_;
  devices::DeviceInfo info_;
  std::vector<LaneKind> lanes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<LaneKind, std::deque<Item>> queues_;
  std::map<LaneKind, std::thread> threads_;
  std::vector<Event> events_;
  std::map<int, std::vector<devices::OperationEdge>> edges_;
  int next_tag_ = 0;
  std::atomic<std::size_t> admissions_{0};
  bool held_ = false;
  bool lost_ = false;
  bool stopping_ = false;
};

}  // namespace accord::testing
