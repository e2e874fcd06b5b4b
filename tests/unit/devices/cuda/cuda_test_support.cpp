// Helpers of the CUDA unit tests (see cuda_test_support.h).
#include "tests/unit/devices/cuda/cuda_test_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>

#ifndef ACCORD_CUDA_TEST_KERNELS_DIR
#define ACCORD_CUDA_TEST_KERNELS_DIR ""
#endif

namespace accord::devices::cuda::testing {
namespace {

std::atomic<std::uint64_t> g_report_clock{0};

std::size_t rest(const DeviceMemory& memory, std::size_t offset, std::size_t length) {
  return length == static_cast<std::size_t>(-1) ? memory.bytes() - offset : length;
}

}  // namespace

Result<std::unique_ptr<CudaDevice>> open_gpu(const CudaDeviceOptions& options) {
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<const CudaSymbols> syms, CudaSymbols::load(options.loader));
  int count = 0;
  if (syms->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return unsupported_error("cuda: no CUDA devices");
  return CudaDevice::open(std::move(syms), 0, options);
}

Result<std::vector<std::unique_ptr<CudaDevice>>> open_gpus() {
  CudaDeviceOptions options;
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<const CudaSymbols> syms, CudaSymbols::load(options.loader));
  int count = 0;
  if (syms->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return unsupported_error("cuda: no CUDA devices");
  std::vector<std::unique_ptr<CudaDevice>> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::open(syms, ordinal, options));
    devices.push_back(std::move(device));
  }
  return devices;
}

std::optional<std::vector<std::byte>> kernel_file(const std::string& name) {
  const std::string dir = ACCORD_CUDA_TEST_KERNELS_DIR;
  if (dir.empty()) return std::nullopt;
  std::ifstream in(dir + "/" + name, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

CodeImage gpu_image(std::vector<std::byte> bytes, std::string name, std::uint32_t threads) {
  CodeImage image;
  image.name = std::move(name);
  image.device = DeviceId::gpu(0);
  image.image = std::move(bytes);
  image.block = {threads, 1, 1};
  return image;
}

HostPages::HostPages(std::size_t bytes) : bytes_(bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t mapped = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  address_ = static_cast<std::byte*>(p);
}

HostPages::~HostPages() {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  ::munmap(address_, (bytes_ + page - 1) / page * page);
}

DeviceInfo host_info() {
  DeviceInfo info;
  info.kind = DeviceKind::Host;
  info.backend = "host";
  info.name = "host";
  return info;
}

void RecordingSink::record(int outcome, Status status) noexcept {
  // Notify under the lock: a waiter may destroy the sink as soon as it sees the count.
  const std::lock_guard lock(mu_);
  ++counts_[outcome];
  if (outcome == 1) error_ = std::move(status);
  thread_ = std::this_thread::get_id();
  order_ = ++g_report_clock;
  changed_.notify_all();
}

bool RecordingSink::wait_for(int calls) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, std::chrono::seconds(10),
                           [&] { return counts_[0] + counts_[1] + counts_[2] >= calls; });
}
int RecordingSink::calls() {
  const std::lock_guard lock(mu_);
  return counts_[0] + counts_[1] + counts_[2];
}
int RecordingSink::done() {
  const std::lock_guard lock(mu_);
  return counts_[0];
}
int RecordingSink::errors() {
  const std::lock_guard lock(mu_);
  return counts_[1];
}
Status RecordingSink::last_error() {
  const std::lock_guard lock(mu_);
  return error_;
}
std::thread::id RecordingSink::last_thread() {
  const std::lock_guard lock(mu_);
  return thread_;
}
std::uint64_t RecordingSink::last_order() {
  const std::lock_guard lock(mu_);
  return order_;
}

void RecordingListener::on_device_lost(Status cause) noexcept {
  const std::lock_guard lock(mu_);  // notify under the lock, as RecordingSink does
  if (++calls_ == 1) cause_ = std::move(cause);
  changed_.notify_all();
}
bool RecordingListener::wait_for(int calls) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return calls_ >= calls; });
}
int RecordingListener::calls() {
  const std::lock_guard lock(mu_);
  return calls_;
}
Status RecordingListener::first_cause() {
  const std::lock_guard lock(mu_);
  return cause_;
}

OperationBinding bind(const DeviceMemory& memory, Access access, std::size_t offset, std::size_t length) {
  OperationBinding b;
  b.memory = &memory;
  b.address = memory.device_address();
  b.offset = offset;
  b.length = rest(memory, offset, length);
  b.access = access;
  return b;
}

OperationBinding bind_admitted(const DeviceMemory& memory, const AdmittedMemory& admission, Access access,
                               std::size_t offset, std::size_t length) {
  OperationBinding b = bind(memory, access, offset, length);
  b.admission = &admission;
  b.address = admission.device_address();
  return b;
}

std::unique_ptr<NativeRegion> lower(Device& device, std::span<const Operation> ops,
                                    std::span<const OperationEdge> edges, std::uint32_t slots) {
  RegionRequest request;
  request.operations = ops;
  request.edges = edges;
  request.slots = slots;
  auto region = device.lower(request);
  INFO("lower: " << region.status().to_string());
  REQUIRE(region.ok());
  return std::move(region).value();
}

void launch_and_wait(Device& device, NativeRegion& region, RecordingSink& sink, std::uint32_t slot) {
  const int before = sink.calls();
  device.launch(region, RegionWaits{slot, {}}, sink);
  REQUIRE(sink.wait_for(before + 1));
}

bool early_kernel_unavailable(const CudaDevice& device, CudaFlagWriter writer) {
  if (writer != CudaFlagWriter::EarlyKernel) return false;
  const std::string& target = device.info().target;  // "sm_XY", "sm_XYZ"
  const bool hopper_or_later = target.size() > 4 && std::stoi(target.substr(3)) >= 90;
  if (hopper_or_later) return false;
  WARN("skipped: the early flag kernel needs sm_90 or later, and " << device.info().name << " is " << target);
  return true;
}

std::vector<std::uint8_t> read_back(CudaDevice& device, const DeviceMemory& memory) {
  HostPages pages(memory.bytes());
  auto admission = device.admit(pages, host_info());
  INFO("admit: " << admission.status().to_string());
  REQUIRE(admission.ok());
  const std::array bindings{bind_admitted(pages, *admission.value(), Access::Write), bind(memory, Access::Read)};
  const Operation copy = copy_op(LaneKind::Download, bindings);
  const auto region = lower(device, std::span<const Operation>(&copy, 1));
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  INFO("read back: " << sink.last_error().to_string());
  REQUIRE(sink.done() == 1);
  const auto* p = pages.as<const std::uint8_t>();
  return std::vector<std::uint8_t>(p, p + memory.bytes());
}

}  // namespace accord::devices::cuda::testing
