// A test-only Device that completes a region only when the test says so (IREE's null
// driver, stdexec's impulse_scheduler). Lets scheduler tests fix exact interleavings:
// which regions are launched, in what order, and how each one ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "daemon/devices/device.h"

namespace accord::testing {

class ManualDevice final : public devices::Device {
 public:
  // A lowered region remembers the operations' first node index via `tag`.
  struct Region final : devices::NativeRegion {
    std::size_t ops = 0;
    int tag = 0;
  };
  struct Launched {
    Region* region = nullptr;
    devices::CompletionSink* sink = nullptr;
  };

  ManualDevice() {
    info_.kind = devices::DeviceKind::Host;
    info_.backend = "manual";
    info_.name = "manual";
    info_.target = "test";
    launched_capacity_.reserve(1024);
  }

  const devices::DeviceInfo& info() const noexcept override { return info_; }
  std::span<const LaneKind> lanes() const noexcept override { return kLanes; }
  bool supports(MemoryPlacement p) const noexcept override {
    return p.kind() == MemoryPlacement::Kind::HostVisible;
  }

  Result<std::unique_ptr<devices::DeviceMemory>> allocate(const devices::AllocationRequest& r) override {
    return std::unique_ptr<devices::DeviceMemory>(new Memory(r.bytes));
  }

  Result<std::unique_ptr<devices::LoadedCode>> load(const devices::CodeImage& image,
                                                    const KernelContract& contract) override {
    return std::unique_ptr<devices::LoadedCode>(new Code(image.name, contract));
  }

  Result<std::unique_ptr<devices::AdmittedMemory>> admit(const devices::DeviceMemory& memory,
                                                         const devices::DeviceInfo& home) override {
    struct View final : devices::AdmittedMemory {
      explicit View(std::uint64_t a) : address(a) {}
      std::uint64_t device_address() const noexcept override { return address; }
      std::uint64_t address;
    };
    if (memory.host_address() == nullptr)
      return unsupported_error("manual device cannot reach memory of " + home.name);
    return std::unique_ptr<devices::AdmittedMemory>(new View(memory.device_address()));
  }

  Result<std::unique_ptr<devices::NativeRegion>> lower(const devices::RegionRequest& request) override {
    auto region = std::make_unique<Region>();
    region->ops = request.operations.size();
    region->tag = next_tag_++;
    return std::unique_ptr<devices::NativeRegion>(std::move(region));
  }

  // Records the launch; never allocates (the queue is a preallocated vector).
  void launch(devices::NativeRegion& region, const devices::RegionWaits&,
              devices::CompletionSink& sink) noexcept override {
    {
      std::lock_guard lock(mu_);
      launched_capacity_.push_back({static_cast<Region*>(&region), &sink});
      ++launch_count_;
    }
    cv_.notify_all();
  }
  bool launches_synchronously() const noexcept override { return false; }

  // Waits until at least `n` regions are in flight (launched and not completed).
  bool wait_in_flight(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return launched_capacity_.size() >= n; });
  }
  std::size_t in_flight() {
    std::lock_guard lock(mu_);
    return launched_capacity_.size();
  }
  std::size_t launch_count() {
    std::lock_guard lock(mu_);
    return launch_count_;
  }
  // Tags (lowering order) of regions in flight, in launch order.
  std::vector<int> in_flight_tags() {
    std::lock_guard lock(mu_);
    std::vector<int> tags;
    for (const Launched& l : launched_capacity_) tags.push_back(l.region->tag);
    return tags;
  }
  // Completes the in-flight region with lowering tag `tag` (success, error or cancel).
  bool complete(int tag) { return finish(tag, Status()); }
  bool fail(int tag, Status status) { return finish(tag, std::move(status)); }

 private:
  struct Memory final : devices::DeviceMemory {
    explicit Memory(std::size_t n) : bytes_(n), data_(new std::byte[n]()) {}
    std::size_t bytes() const noexcept override { return bytes_; }
    std::byte* host_address() const noexcept override { return data_.get(); }
    int export_fd() const noexcept override { return -1; }
    std::size_t bytes_;
    std::unique_ptr<std::byte[]> data_;
  };
  struct Code final : devices::LoadedCode {
    Code(std::string name, KernelContract contract) : name_(std::move(name)), contract_(std::move(contract)) {}
    const std::string& name() const noexcept override { return name_; }
    const KernelContract& contract() const noexcept override { return contract_; }
    std::string name_;
    KernelContract contract_;
  };

  bool finish(int tag, Status status) {
    devices::CompletionSink* sink = nullptr;
    {
      std::lock_guard lock(mu_);
      for (auto it = launched_capacity_.begin(); it != launched_capacity_.end(); ++it) {
        if (it->region->tag == tag) {
          sink = it->sink;
          launched_capacity_.erase(it);
          break;
        }
      }
    }
    if (!sink) return false;
    if (status.ok()) sink->on_done();
    else if (status.kind() == ErrorKind::Cancelled) sink->on_cancelled();
    else sink->on_error(std::move(status));
    return true;
  }

  static constexpr LaneKind kLanes[] = {LaneKind::Upload, LaneKind::Compute, LaneKind::Download,
                                        LaneKind::Npu, LaneKind::Host};
  devices::DeviceInfo info_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Launched> launched_capacity_;
  std::size_t launch_count_ = 0;
  int next_tag_ = 0;
};

}  // namespace accord::testing
