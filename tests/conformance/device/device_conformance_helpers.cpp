// The device conformance suite's helpers (device_conformance_helpers.h). Everything here
// goes through the Device interface, so it works unchanged for every backend.
#include "tests/conformance/device/device_conformance_helpers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace accord::devices::conformance {
namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Orders reports across sinks, so a test can tell which region completed first.
std::atomic<std::uint64_t> g_completion_clock{0};

}  // namespace

bool FailsWithMatcher::match(const Status& status) const {
  if (status.ok()) return false;
  if (!kinds_.empty() && std::find(kinds_.begin(), kinds_.end(), status.kind()) == kinds_.end()) return false;
  const std::string message = lowercase(status.message());
  return std::all_of(fragments_.begin(), fragments_.end(),
                     [&](const std::string& f) { return message.find(lowercase(f)) != std::string::npos; });
}

std::string FailsWithMatcher::describe() const {
  std::string d = "fails";
  for (std::size_t i = 0; i < kinds_.size(); ++i)
    d += std::string(i == 0 ? " with " : " or ") + std::string(to_string(kinds_[i]));
  for (std::size_t i = 0; i < fragments_.size(); ++i)
    d += (i == 0 ? " and a message containing \"" : "\" and \"") + fragments_[i];
  if (!fragments_.empty()) d += "\"";
  return d;
}

// ---------------------------------------------------------------------------------

void RecordingSink::record(int outcome, Status status) noexcept {
  std::lock_guard lock(mu_);
  ++counts_[static_cast<std::size_t>(outcome)];
  if (!status.ok()) error_ = std::move(status);
  order_ = ++g_completion_clock;
  thread_ = std::this_thread::get_id();
  // Notified under the lock: the waiter may destroy the sink as soon as it wakes, and
  // it cannot wake before this function has stopped touching members.
  changed_.notify_all();
}

bool RecordingSink::wait_for(int calls) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, kCompletionLimit,
                           [&] { return counts_[0] + counts_[1] + counts_[2] >= calls; });
}

int RecordingSink::calls() const {
  std::lock_guard lock(mu_);
  return counts_[0] + counts_[1] + counts_[2];
}
int RecordingSink::done() const {
  std::lock_guard lock(mu_);
  return counts_[0];
}
int RecordingSink::errors() const {
  std::lock_guard lock(mu_);
  return counts_[1];
}
int RecordingSink::cancelled() const {
  std::lock_guard lock(mu_);
  return counts_[2];
}
Status RecordingSink::last_error() const {
  std::lock_guard lock(mu_);
  return error_;
}
std::uint64_t RecordingSink::last_order() const {
  std::lock_guard lock(mu_);
  return order_;
}
std::thread::id RecordingSink::last_thread() const {
  std::lock_guard lock(mu_);
  return thread_;
}

void RecordingListener::on_device_lost(Status cause) noexcept {
  std::lock_guard lock(mu_);
  if (calls_++ == 0) cause_ = std::move(cause);
  changed_.notify_all();  // under the lock, as in RecordingSink::record
}
int RecordingListener::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}
Status RecordingListener::first_cause() const {
  std::lock_guard lock(mu_);
  return cause_;
}
bool RecordingListener::wait_for(int calls) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, kCompletionLimit, [&] { return calls_ >= calls; });
}

HostMappedDouble::HostMappedDouble(std::size_t bytes) : bytes_(bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  mapped_ = (bytes + page - 1) / page * page;
  void* address = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(address != MAP_FAILED);
  address_ = static_cast<std::byte*>(address);
}

HostMappedDouble::~HostMappedDouble() {
  if (address_ != nullptr) ::munmap(address_, mapped_);
}

DeviceInfo host_mapped_home(const Device& device) {
  DeviceInfo home;
  home.kind = device.info().kind == DeviceKind::Host ? DeviceKind::Npu : DeviceKind::Host;
  home.ordinal = 0;
  home.backend = "conformance";
  home.name = home.id().to_string() + " (conformance double)";
  home.target = "none";
  return home;
}

DeviceInfo unreachable_home(const Device& device) {
  DeviceInfo home;
  home.kind = DeviceKind::Gpu;
  home.ordinal = device.info().kind == DeviceKind::Gpu ? device.info().ordinal + 7 : 7;
  home.backend = "conformance";
  home.name = home.id().to_string() + " (conformance double)";
  home.target = "none";
  return home;
}

// ---------------------------------------------------------------------------------

std::vector<MemoryPlacement> candidate_placements(const Device& device) {
  const int n = device.info().kind == DeviceKind::Host ? 0 : device.info().ordinal;
  return {MemoryPlacement::host_visible(), MemoryPlacement::gpu_local(n), MemoryPlacement::gpu_local(n + 1),
          MemoryPlacement::npu_local(n),   MemoryPlacement::npu_local(n + 1), MemoryPlacement::shared(n),
          MemoryPlacement::shared(n + 1)};
}

std::optional<MemoryPlacement> home_placement(const Device& device) {
  for (MemoryPlacement placement : candidate_placements(device))
    if (device.supports(placement)) return placement;
  return std::nullopt;
}

bool has_lane(const Device& device, LaneKind lane) {
  const auto lanes = device.lanes();
  return std::find(lanes.begin(), lanes.end(), lane) != lanes.end();
}

LaneKind work_lane(const Device& device) {
  if (has_lane(device, LaneKind::Compute)) return LaneKind::Compute;
  REQUIRE_FALSE(device.lanes().empty());
  return device.lanes().front();
}

std::unique_ptr<DeviceMemory> allocate(Device& device, std::size_t bytes) {
  const std::optional<MemoryPlacement> placement = home_placement(device);
  INFO("device " << device.info().id().to_string() << " is the home of no placement, so it cannot hold the "
                 << "test's data; a backend without memory lists this test as a gap");
  REQUIRE(placement.has_value());
  INFO("allocating " << bytes << " bytes of " << placement->to_string());
  return UNWRAP(device.allocate({bytes, *placement}));
}

OperationBinding bind(const DeviceMemory& memory, Access access, std::size_t offset, std::size_t length) {
  if (length == static_cast<std::size_t>(-1)) length = memory.bytes() - offset;
  OperationBinding binding;
  binding.memory = &memory;
  binding.address = memory.device_address();
  binding.offset = offset;
  binding.length = length;
  binding.access = access;
  return binding;
}

OperationBinding bind_admitted(const DeviceMemory& memory, const AdmittedMemory& admission, Access access) {
  OperationBinding binding = bind(memory, access);
  binding.admission = &admission;
  binding.address = admission.device_address();
  return binding;
}

std::unique_ptr<LoadedCode> load(Device& device, const std::optional<CodeImage>& image, const char* what,
                                 const KernelContract& contract) {
  INFO("backend '" << device_backend().name << "' provides no ConformanceCode::" << what
                   << " kernel: provide one in backends_" << device_backend().name
                   << ".cpp, or list this test as a gap with the reason");
  REQUIRE(image.has_value());
  CodeImage on_device = *image;
  on_device.device = device.info().id();
  INFO("loading '" << on_device.name << "'");
  return UNWRAP(device.load(on_device, contract));
}

KernelContract one_binding_contract(std::size_t bytes) {
  KernelContract contract;
  contract.bindings = {BindingContract{bytes, 4, Access::ReadWrite, "victim"}};
  return contract;
}

KernelContract sleep_contract(std::uint32_t microseconds) {
  KernelContract contract;
  contract.bindings = {BindingContract{4, 4, Access::ReadWrite, "marker"}};
  append_constant(contract.constants, microseconds);
  return contract;
}

std::unique_ptr<NativeRegion> lower(Device& device, std::span<const Operation> operations,
                                    std::span<const OperationEdge> edges, std::uint32_t slots) {
  RegionRequest request;
  request.operations = operations;
  request.edges = edges;
  request.slots = slots;
  INFO("lowering a run of " << operations.size() << " operations with " << edges.size() << " edges");
  return UNWRAP(device.lower(request));
}

void launch_and_wait(Device& device, NativeRegion& region, RecordingSink& sink, std::uint32_t slot) {
  const int before = sink.calls();
  device.launch(region, RegionWaits{slot, {}}, sink);
  INFO("waiting " << kCompletionLimit.count() << " s for the launch to report its outcome");
  REQUIRE(sink.wait_for(before + 1));
}

std::unique_ptr<NativeRegion> simple_region(Device& device, std::unique_ptr<DeviceMemory>& scratch,
                                           std::uint32_t slots) {
  if (!home_placement(device)) return lower(device, {}, {}, slots);
  scratch = allocate(device, 64);
  const OperationBinding binding = bind(*scratch, Access::Write);
  const Operation op = fill_op(work_lane(device), binding, 0x5A);
  return lower(device, std::span<const Operation>(&op, 1), {}, slots);
}

std::vector<std::uint8_t> read_back(Device& device, const DeviceMemory& memory) {
  std::vector<std::uint8_t> out(memory.bytes());
  if (memory.host_address() != nullptr) {
    std::memcpy(out.data(), memory.host_address(), out.size());
    return out;
  }
  // Not host mapped (GPU-local memory): copy it into host pages the device admits.
  HostMappedDouble staging(memory.bytes());
  INFO("reading back memory that is not host mapped needs host pages admitted to the device");
  const std::unique_ptr<AdmittedMemory> admission = UNWRAP(device.admit(staging, host_mapped_home(device)));
  const std::array bindings{bind_admitted(staging, *admission, Access::Write), bind(memory, Access::Read)};
  const LaneKind lane = has_lane(device, LaneKind::Download) ? LaneKind::Download : work_lane(device);
  const Operation op = copy_op(lane, bindings);
  const std::unique_ptr<NativeRegion> region = lower(device, std::span<const Operation>(&op, 1));
  RecordingSink sink;
  launch_and_wait(device, *region, sink);
  REQUIRE(sink.done() == 1);
  std::memcpy(out.data(), staging.host_address(), out.size());
  return out;
}

std::vector<std::uint8_t> bytes_of_float(float value) {
  std::vector<std::uint8_t> out(sizeof(float));
  std::memcpy(out.data(), &value, sizeof(float));
  return out;
}

float float_of_bytes(std::uint8_t byte) {
  const std::uint32_t pattern = 0x01010101u * byte;
  float value = 0;
  std::memcpy(&value, &pattern, sizeof(value));
  return value;
}

}  // namespace accord::devices::conformance
