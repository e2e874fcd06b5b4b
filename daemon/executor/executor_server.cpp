// ExecutorServer's control side: requests from accordd rebuilt into real Device calls.
// Ids, not pointers, cross the process boundary; every id is looked up and checked.
#include "daemon/executor/executor_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "daemon/executor/gpu_executor.h"

namespace accord::executor {
namespace {

// accordd's host-mapped memory (a sealed memfd), mapped shared into the executor so the
// real device can admit it (cuMemHostRegister) as if it had allocated it.
class MappedMemory final : public devices::DeviceMemory {
 public:
  static Result<std::unique_ptr<MappedMemory>> map(UniqueFd fd, std::size_t bytes) {
    struct stat info {};
    if (!fd || ::fstat(fd.get(), &info) != 0 || info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) < bytes ||
        bytes == 0)
      return invalid_error("admitted memory: the passed fd does not hold " + std::to_string(bytes) + " bytes");
    void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (address == MAP_FAILED) return busy_error(std::string("admitted memory: mmap: ") + std::strerror(errno));
    return std::unique_ptr<MappedMemory>(new MappedMemory(std::move(fd), static_cast<std::byte*>(address), bytes));
  }
  ~MappedMemory() override { static_cast<void>(::munmap(address_, bytes_)); }
  std::size_t bytes() const noexcept override { return bytes_; }
  std::byte* host_address() const noexcept override { return address_; }
  int export_fd() const noexcept override { return fd_.get(); }

 private:
  MappedMemory(UniqueFd fd, std::byte* address, std::size_t bytes) : fd_(std::move(fd)), address_(address), bytes_(bytes) {}
  UniqueFd fd_;
  std::byte* address_;
  std::size_t bytes_;
};

// GPU memory another executor exported, as its fd: nothing is mapped here; the device
// imports it (CudaDevice::admit -> CudaImportedMemory) while the admission lives.
class ExportedGpuMemory final : public devices::DeviceMemory {
 public:
  ExportedGpuMemory(UniqueFd fd, std::size_t bytes) : fd_(std::move(fd)), bytes_(bytes) {}
  std::size_t bytes() const noexcept override { return bytes_; }
  std::byte* host_address() const noexcept override { return nullptr; }
  int export_fd() const noexcept override { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::size_t bytes_;
};

}  // namespace

ExecutorServer::ExecutorServer(std::unique_ptr<devices::Device> device, ExecutorChannel channel, UniqueFd socket,
                               std::string label)
    : device_(std::move(device)), channel_(std::move(channel)), socket_(std::move(socket)), label_(std::move(label)),
      lost_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      completions_(channel_.completions()) {
  device_->attach(*this);
  polls_ = device_->completes_by_polling();
  if (const int fd = device_->completion_word_fd(); fd >= 0) {
    struct stat file {};
    UniqueFd again(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (again && ::fstat(again.get(), &file) == 0 && file.st_size > 0) {
      auto words = detail::CompletionWordMapping::map(std::move(again), static_cast<std::uint64_t>(file.st_size), label_);
      if (words.ok()) words_ = std::move(words).value();
    }
  }
  consumer_ = std::thread([this] { consume(); });
}

ExecutorServer::~ExecutorServer() {
  stop_.store(true);
  wire::ring_doorbell(channel_.header().command_bell);
  // The bell wakes only counted sleepers; the consumer's timed sleep covers the rest.
  if (consumer_.joinable()) consumer_.join();
  device_->shut_down();
  regions_.clear();
  code_.clear();
  admissions_.clear();
  memory_.clear();
  device_.reset();
}

void ExecutorServer::on_device_lost(Status cause) noexcept {
  {
    std::lock_guard lock(lost_mu_);
    if (!lost_cause_) lost_cause_ = std::move(cause);
  }
  const std::uint64_t one = 1;
  static_cast<void>(::write(lost_fd_.get(), &one, sizeof(one)));
}

void ExecutorServer::report_loss_and_exit() {
  // Launches in flight report first (the faulting one its Execution error), so that
  // accordd, which drains the completion queue before it fails what is left, passes
  // the device's own errors on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  LostInfo lost;
  {
    std::lock_guard lock(lost_mu_);
    lost.kind = lost_cause_ ? lost_cause_->kind() : ErrorKind::DeviceLost;
    lost.message = lost_cause_ ? std::string(lost_cause_->message()) : "lost";
  }
  spdlog::error("{}: device lost: {}; exiting", label_, lost.message);
  static_cast<void>(send_control(socket_.get(), ControlOp::Lost, 0, 0, encode(lost)));
  ::_exit(kExecutorExitLost);
}

int ExecutorServer::run() {
  for (;;) {
    pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {lost_fd_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return kExecutorExitBadArgs;
    }
    if (fds[1].revents != 0) report_loss_and_exit();
    if (fds[0].revents == 0) continue;
    auto received = receive_control(socket_.get());
    if (!received.ok()) {
      if (received.status().kind() == ErrorKind::Busy) continue;
      spdlog::error("{}: bad message from accordd: {}", label_, received.status().message());
      return kExecutorExitBadArgs;
    }
    if (!received->has_value()) return kExecutorExitOk;  // accordd hung up
    ControlMessage& message = **received;
    if (message.op == ControlOp::Exit) return kExecutorExitOk;
    if (message.op == ControlOp::Release) {
      release(message);
      continue;
    }
    Answer answer = handle(message);
    const std::vector<std::byte> text =
        answer.status.ok() ? std::vector<std::byte>{}
                           : std::vector<std::byte>(reinterpret_cast<const std::byte*>(answer.status.message().data()),
                                                    reinterpret_cast<const std::byte*>(answer.status.message().data()) +
                                                        answer.status.message().size());
    Status sent = send_control(socket_.get(), ControlOp::Reply, message.request_id, encode_status(answer.status),
                               answer.status.ok() ? std::span<const std::byte>(answer.payload) : std::span<const std::byte>(text),
                               answer.status.ok() ? answer.fd : -1);
    if (!sent.ok()) return kExecutorExitOk;  // accordd is gone
  }
}

ExecutorServer::Answer ExecutorServer::handle(ControlMessage& message) {
  switch (message.op) {
    case ControlOp::Allocate: return allocate(message);
    case ControlOp::Admit: return admit(message);
    case ControlOp::Load: return load(message);
    case ControlOp::Lower: return lower(message);
    case ControlOp::FreeMemory: return {Status(), encode_u64(device_->free_memory())};
    default: return {invalid_error(label_ + ": unknown request '" + to_string(message.op) + "'")};
  }
}

ExecutorServer::Answer ExecutorServer::allocate(const ControlMessage& message) {
  auto request = decode_allocate(message.payload);
  if (!request.ok()) return {request.status()};
  auto memory = device_->allocate(devices::AllocationRequest{static_cast<std::size_t>(request->bytes), request->placement});
  if (!memory.ok()) return {memory.status()};
  ObjectReply reply{0, (*memory)->bytes(), (*memory)->device_address()};
  const int fd = (*memory)->export_fd();
  std::lock_guard lock(objects_mu_);
  reply.id = ++next_id_;
  memory_.emplace(reply.id, std::move(memory).value());
  return {Status(), encode(reply), fd};
}

ExecutorServer::Answer ExecutorServer::admit(ControlMessage& message) {
  auto request = decode_admit(message.payload);
  if (!request.ok()) return {request.status()};
  std::unique_ptr<devices::DeviceMemory> pages;
  if (request->kind == AdmitKind::GpuMemory) {
    if (!message.fd || request->bytes == 0 || request->home.kind != DeviceKind::Gpu)
      return {invalid_error(label_ + ": admitted GPU memory of " + request->home.name + " (" +
                            std::to_string(request->bytes) + " bytes) needs " +
                            (!message.fd ? "its exported fd" : request->bytes == 0 ? "a size" : "a GPU as its home"))};
    pages = std::make_unique<ExportedGpuMemory>(std::move(message.fd), static_cast<std::size_t>(request->bytes));
  } else {
    auto mapped = MappedMemory::map(std::move(message.fd), static_cast<std::size_t>(request->bytes));
    if (!mapped.ok()) return {mapped.status()};
    pages = std::move(mapped).value();
  }
  auto view = device_->admit(*pages, request->home);
  if (!view.ok()) return {view.status()};
  ObjectReply reply{0, request->bytes, (*view)->device_address()};
  std::lock_guard lock(objects_mu_);
  reply.id = ++next_id_;
  admissions_.emplace(reply.id, Admission{std::move(pages), std::move(view).value()});
  return {Status(), encode(reply)};
}

ExecutorServer::Answer ExecutorServer::load(const ControlMessage& message) {
  auto request = decode_load(message.payload);
  if (!request.ok()) return {request.status()};
  auto code = device_->load(request->image, request->contract);
  if (!code.ok()) return {code.status()};
  std::lock_guard lock(objects_mu_);
  ObjectReply reply{++next_id_, 0, 0};
  code_.emplace(reply.id, std::move(code).value());
  return {Status(), encode(reply)};
}

ExecutorServer::Answer ExecutorServer::lower(const ControlMessage& message) {
  auto decoded = decode_lower(message.payload);
  if (!decoded.ok()) return {decoded.status()};
  const WireRegion& wire = *decoded;
  if (wire.slots == 0 || wire.slots > (1u << 16)) return {invalid_error(label_ + ": a region with " + std::to_string(wire.slots) + " slots")};
  // Storage for the rebuilt request: bindings per operation, pointing into our tables.
  std::vector<std::vector<devices::OperationBinding>> bindings(wire.operations.size());
  std::vector<devices::Operation> operations(wire.operations.size());
  {
    std::lock_guard lock(objects_mu_);
    for (std::size_t i = 0; i < wire.operations.size(); ++i) {
      const WireOperation& w = wire.operations[i];
      devices::Operation& op = operations[i];
      op.kind = w.kind;
      op.lane = w.lane;
      op.fill_value = w.fill_value;
      op.node = w.node;
      if (w.code != 0) {
        const auto found = code_.find(w.code);
        if (found == code_.end()) return {internal_error(label_ + ": node " + std::to_string(w.node) + ": no code " + std::to_string(w.code))};
        op.code = found->second.get();
      }
      for (const WireBinding& b : w.bindings) {
        devices::OperationBinding binding;
        binding.address = b.address;
        binding.offset = static_cast<std::size_t>(b.offset);
        binding.length = static_cast<std::size_t>(b.length);
        binding.access = b.access;
        if (b.ref == BindingRef::Memory) {
          const auto found = memory_.find(b.id);
          if (found == memory_.end()) return {internal_error(label_ + ": node " + std::to_string(w.node) + ": no memory " + std::to_string(b.id))};
          binding.memory = found->second.get();
        } else if (b.ref == BindingRef::Admission) {
          const auto found = admissions_.find(b.id);
          if (found == admissions_.end()) return {internal_error(label_ + ": node " + std::to_string(w.node) + ": no admission " + std::to_string(b.id))};
          binding.memory = found->second.pages.get();
          binding.admission = found->second.view.get();
        }
        bindings[i].push_back(binding);
      }
      op.bindings = bindings[i];
    }
  }
  devices::RegionRequest request;
  request.operations = operations;
  request.edges = wire.edges;
  request.slots = wire.slots;
  request.priority = wire.priority;
  request.tenant = wire.tenant;
  auto native = device_->lower(request);
  if (!native.ok()) return {native.status()};
  auto region = std::make_unique<Region>();
  region->native = std::move(native).value();
  region->slots = wire.slots;
  region->sinks = std::make_unique<SlotSink[]>(wire.slots);
  region->words = std::make_unique<std::atomic<std::uint32_t>*[]>(wire.slots);
  RegionReply reply;
  // Every slot's completion word, or none: accordd then waits for completion records only.
  if (device_->completion_word_fd() >= 0) {
    for (std::uint32_t s = 0; s < wire.slots; ++s) {
      const std::optional<std::uint64_t> word = region->native->completion_word(s);
      std::atomic<std::uint32_t>* mapped = word && words_ ? words_->word(*word) : nullptr;
      if (mapped == nullptr) {
        reply.words.clear();
        break;
      }
      reply.words.push_back(*word);
      region->words[s] = mapped;
    }
  }
  std::lock_guard lock(objects_mu_);
  reply.id = ++next_id_;
  for (std::uint32_t s = 0; s < wire.slots; ++s) {
    region->sinks[s].server = this;
    region->sinks[s].region = reply.id;
    region->sinks[s].slot = s;
  }
  regions_.emplace(reply.id, std::move(region));
  return {Status(), encode(reply)};
}

void ExecutorServer::release(const ControlMessage& message) {
  auto request = decode_release(message.payload);
  if (!request.ok()) {
    spdlog::warn("{}: {}", label_, request.status().message());
    return;
  }
  // accordd releases an object only after it saw the completions of every launch that
  // used it, each pushed under completion_lock_. Taking that lock here waits for a push
  // still finishing and orders this delete after everything the device's thread did
  // before it reported: an ordering that runs through accordd, which ThreadSanitizer
  // cannot see across the process boundary.
  while (completion_lock_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  completion_lock_.clear(std::memory_order_release);
  // Moved out under the lock and destroyed outside it: a device may block in teardown.
  std::unique_ptr<Region> region;
  std::unique_ptr<devices::LoadedCode> code;
  std::optional<Admission> admission;
  std::unique_ptr<devices::DeviceMemory> memory;
  {
    std::lock_guard lock(objects_mu_);
    switch (request->kind) {
      case ReleaseKind::Region:
        if (auto found = regions_.find(request->id); found != regions_.end()) {
          region = std::move(found->second);
          regions_.erase(found);
        }
        break;
      case ReleaseKind::Code:
        if (auto found = code_.find(request->id); found != code_.end()) {
          code = std::move(found->second);
          code_.erase(found);
        }
        break;
      case ReleaseKind::Admission:
        if (auto found = admissions_.find(request->id); found != admissions_.end()) {
          admission.emplace(std::move(found->second));
          admissions_.erase(found);
        }
        break;
      case ReleaseKind::Memory:
        if (auto found = memory_.find(request->id); found != memory_.end()) {
          memory = std::move(found->second);
          memory_.erase(found);
        }
        break;
    }
  }
  if (region) await_reports(region);
}

void ExecutorServer::await_reports(std::unique_ptr<Region>& region) noexcept {
  // accordd may release a region as soon as it read its last launch's completion word,
  // before the device here reported that launch (and the device still holds the slot):
  // the report is due, since the GPU has finished, so look for it until it is pushed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::uint32_t slot = 0; slot < region->slots; ++slot) {
    if (!await_report(region->sinks[slot], [&] { return std::chrono::steady_clock::now() > deadline; })) {
      // Destroying it could crash this process in the device's completion thread.
      spdlog::error("{}: region released with a launch in slot {} still unreported after 10 s; kept", label_, slot);
      static_cast<void>(region.release());
      return;
    }
  }
}

}  // namespace accord::executor
