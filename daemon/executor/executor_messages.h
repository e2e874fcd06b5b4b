// The payloads of the executor's control requests and answers, and their hand-written
// encoders and decoders (byte_codec.h). accordd encodes what it asks and decodes what
// the executor answers with every field checked, so nothing an executor sends can
// crash accordd; the executor decodes accordd's requests just as strictly.
// Thread-safety: free functions on values; no shared state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "accord/status.h"
#include "daemon/devices/device.h"

namespace accord::executor {

// What an executor says once it has opened its GPU (or why it has none).
struct HelloInfo {
  std::int32_t pid = 0;
  // Set when the backend's factory failed: the reason ("cuda: no driver: ..."); nothing
  // below is meaningful then.
  std::string error;
  // False when the backend opened no device with the asked ordinal (past the last GPU).
  bool has_device = false;
  devices::DeviceInfo info;
  std::vector<LaneKind> lanes;
  std::vector<MemoryPlacement> placements;  // those supports() is true for
  bool waits_natively = false;
  bool launches_synchronously = false;
  // Nonzero when the hello carries the device's completion word memfd
  // (Device::completion_word_fd) of at least this many bytes.
  std::uint64_t completion_word_bytes = 0;
};
std::vector<std::byte> encode(const HelloInfo& hello);
Result<HelloInfo> decode_hello(std::span<const std::byte> bytes, const std::string& who);

struct LostInfo {
  ErrorKind kind = ErrorKind::DeviceLost;
  std::string message;
};
std::vector<std::byte> encode(const LostInfo& lost);
Result<LostInfo> decode_lost(std::span<const std::byte> bytes, const std::string& who);

struct AllocateRequest {
  std::uint64_t bytes = 0;
  MemoryPlacement placement = MemoryPlacement::host_visible();
};
std::vector<std::byte> encode(const AllocateRequest& request);
Result<AllocateRequest> decode_allocate(std::span<const std::byte> bytes);

// The executor's id for an object it made, and what accordd's proxy reports for it.
struct ObjectReply {
  std::uint32_t id = 0;
  std::uint64_t bytes = 0;           // allocate: granted bytes
  std::uint64_t device_address = 0;  // allocate, admit
};
std::vector<std::byte> encode(const ObjectReply& reply);
Result<ObjectReply> decode_object(std::span<const std::byte> bytes, const std::string& who);

// Lower's answer: the region's id and, when its slots have them, the offset of each
// slot's completion word in the hello's memfd (kNoCompletionWord for a slot without).
inline constexpr std::uint64_t kNoCompletionWord = ~std::uint64_t{0};
struct RegionReply {
  std::uint32_t id = 0;
  std::vector<std::uint64_t> words;  // empty, or one per slot
};
std::vector<std::byte> encode(const RegionReply& reply);
// Invalid unless `words` is empty or has `slots` entries.
Result<RegionReply> decode_region(std::span<const std::byte> bytes, std::uint32_t slots, const std::string& who);

// Admit: the memory travels as its export fd; this says how big and whose it is, and
// what the fd is: memfd pages the executor maps (host-mapped memory), or GPU memory
// another GPU's executor exported (a VMM handle), which the device imports.
enum class AdmitKind : std::uint8_t { HostPages = 0, GpuMemory = 1 };
struct AdmitRequest {
  std::uint64_t bytes = 0;
  devices::DeviceInfo home;  // kind, ordinal, backend, name
  AdmitKind kind = AdmitKind::HostPages;
};
std::vector<std::byte> encode(const AdmitRequest& request);
Result<AdmitRequest> decode_admit(std::span<const std::byte> bytes);

struct LoadRequest {
  devices::CodeImage image;
  KernelContract contract;
};
std::vector<std::byte> encode(const devices::CodeImage& image, const KernelContract& contract);
Result<LoadRequest> decode_load(std::span<const std::byte> bytes);

// A binding names an executor object instead of a pointer.
enum class BindingRef : std::uint8_t { None = 0, Memory = 1, Admission = 2 };
struct WireBinding {
  BindingRef ref = BindingRef::None;
  std::uint32_t id = 0;
  std::uint64_t address = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  Access access = Access::Read;
};
struct WireOperation {
  devices::OpKind kind = devices::OpKind::Fill;
  LaneKind lane = LaneKind::Compute;
  std::uint8_t fill_value = 0;
  std::uint32_t code = 0;  // the executor's code id; 0: none
  std::uint32_t node = 0;
  std::vector<WireBinding> bindings;
};
struct WireRegion {
  std::uint32_t slots = 1;
  std::int32_t priority = 0;
  std::uint64_t tenant = 0;
  std::vector<WireOperation> operations;
  std::vector<devices::OperationEdge> edges;
};
std::vector<std::byte> encode(const WireRegion& region);
Result<WireRegion> decode_lower(std::span<const std::byte> bytes);

enum class ReleaseKind : std::uint8_t { Memory = 1, Admission = 2, Code = 3, Region = 4 };
struct ReleaseRequest {
  ReleaseKind kind = ReleaseKind::Memory;
  std::uint32_t id = 0;
};
std::vector<std::byte> encode(const ReleaseRequest& request);
Result<ReleaseRequest> decode_release(std::span<const std::byte> bytes);

std::vector<std::byte> encode_u64(std::uint64_t value);
Result<std::uint64_t> decode_u64(std::span<const std::byte> bytes, const std::string& who);

}  // namespace accord::executor
