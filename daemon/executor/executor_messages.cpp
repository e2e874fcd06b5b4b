// Encoders and decoders of the control payloads. Enumerations are range-checked on the
// way in: an out-of-range byte is Invalid, never a value outside the enum.
#include "daemon/executor/executor_messages.h"

#include "daemon/executor/byte_codec.h"

namespace accord::executor {
namespace {

constexpr std::size_t kMaxText = 4096;

void put_info(ByteWriter& w, const devices::DeviceInfo& info) {
  w.put(static_cast<std::uint8_t>(info.kind));
  w.put(static_cast<std::int32_t>(info.ordinal));
  w.put_string(info.backend);
  w.put_string(info.name);
  w.put_string(info.target);
  w.put(info.memory_bytes);
  w.put_string(info.uuid);
}

devices::DeviceInfo get_info(ByteReader& r) {
  devices::DeviceInfo info;
  const auto kind = r.get<std::uint8_t>();
  if (kind > static_cast<std::uint8_t>(DeviceKind::Npu)) r.fail("device kind " + std::to_string(kind));
  info.kind = static_cast<DeviceKind>(kind);
  info.ordinal = r.get<std::int32_t>();
  info.backend = r.get_string(kMaxText);
  info.name = r.get_string(kMaxText);
  info.target = r.get_string(kMaxText);
  info.memory_bytes = r.get<std::uint64_t>();
  info.uuid = r.get_string(kMaxText);
  return info;
}

void put_placement(ByteWriter& w, MemoryPlacement p) {
  w.put(static_cast<std::uint8_t>(p.kind()));
  w.put(static_cast<std::int32_t>(p.device()));
}

MemoryPlacement get_placement(ByteReader& r) {
  const auto kind = r.get<std::uint8_t>();
  const auto device = r.get<std::int32_t>();
  switch (static_cast<MemoryPlacement::Kind>(kind)) {
    case MemoryPlacement::Kind::HostVisible: return MemoryPlacement::host_visible();
    case MemoryPlacement::Kind::GpuLocal: return MemoryPlacement::gpu_local(device);
    case MemoryPlacement::Kind::NpuLocal: return MemoryPlacement::npu_local(device);
    case MemoryPlacement::Kind::Shared: return MemoryPlacement::shared(device);
  }
  r.fail("placement kind " + std::to_string(kind));
  return MemoryPlacement::host_visible();
}

LaneKind get_lane(ByteReader& r) {
  const auto lane = r.get<std::uint8_t>();
  if (lane > static_cast<std::uint8_t>(LaneKind::Host)) r.fail("lane " + std::to_string(lane));
  return static_cast<LaneKind>(lane);
}

Access get_access(ByteReader& r) {
  const auto access = r.get<std::uint8_t>();
  if (access != static_cast<std::uint8_t>(Access::Read) && access != static_cast<std::uint8_t>(Access::Write) &&
      access != static_cast<std::uint8_t>(Access::ReadWrite))
    r.fail("access " + std::to_string(access));
  return static_cast<Access>(access);
}

template <std::size_t N>
void put_dims(ByteWriter& w, const std::array<std::uint32_t, N>& dims) {
  for (std::uint32_t d : dims) w.put(d);
}
template <std::size_t N>
void get_dims(ByteReader& r, std::array<std::uint32_t, N>& dims) {
  for (std::uint32_t& d : dims) d = r.get<std::uint32_t>();
}

}  // namespace

std::vector<std::byte> encode(const HelloInfo& hello) {
  ByteWriter w;
  w.put(hello.pid);
  w.put_string(hello.error);
  w.put(static_cast<std::uint8_t>(hello.has_device));
  put_info(w, hello.info);
  w.put(static_cast<std::uint32_t>(hello.lanes.size()));
  for (LaneKind lane : hello.lanes) w.put(static_cast<std::uint8_t>(lane));
  w.put(static_cast<std::uint32_t>(hello.placements.size()));
  for (MemoryPlacement p : hello.placements) put_placement(w, p);
  w.put(static_cast<std::uint8_t>(hello.waits_natively));
  w.put(static_cast<std::uint8_t>(hello.launches_synchronously));
  w.put(hello.completion_word_bytes);
  return w.take();
}

Result<HelloInfo> decode_hello(std::span<const std::byte> bytes, const std::string& who) {
  ByteReader r(bytes, "hello from " + who);
  HelloInfo hello;
  hello.pid = r.get<std::int32_t>();
  hello.error = r.get_string(kMaxText);
  hello.has_device = r.get<std::uint8_t>() != 0;
  hello.info = get_info(r);
  const std::uint32_t lanes = r.get_count(1);
  for (std::uint32_t i = 0; i < lanes && r.ok(); ++i) hello.lanes.push_back(get_lane(r));
  const std::uint32_t placements = r.get_count(5);
  for (std::uint32_t i = 0; i < placements && r.ok(); ++i) hello.placements.push_back(get_placement(r));
  hello.waits_natively = r.get<std::uint8_t>() != 0;
  hello.launches_synchronously = r.get<std::uint8_t>() != 0;
  hello.completion_word_bytes = r.get<std::uint64_t>();
  ACCORD_RETURN_IF_ERROR(r.finish());
  return hello;
}

std::vector<std::byte> encode(const LostInfo& lost) {
  ByteWriter w;
  w.put(static_cast<std::uint8_t>(lost.kind));
  w.put_string(lost.message.substr(0, kMaxText));
  return w.take();
}

Result<LostInfo> decode_lost(std::span<const std::byte> bytes, const std::string& who) {
  ByteReader r(bytes, "loss report from " + who);
  LostInfo lost;
  const auto kind = r.get<std::uint8_t>();
  lost.kind = kind <= static_cast<std::uint8_t>(ErrorKind::Internal) ? static_cast<ErrorKind>(kind) : ErrorKind::DeviceLost;
  lost.message = r.get_string(kMaxText);
  ACCORD_RETURN_IF_ERROR(r.finish());
  return lost;
}

std::vector<std::byte> encode(const AllocateRequest& request) {
  ByteWriter w;
  w.put(request.bytes);
  put_placement(w, request.placement);
  return w.take();
}

Result<AllocateRequest> decode_allocate(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "allocate request");
  AllocateRequest request;
  request.bytes = r.get<std::uint64_t>();
  request.placement = get_placement(r);
  ACCORD_RETURN_IF_ERROR(r.finish());
  return request;
}

std::vector<std::byte> encode(const ObjectReply& reply) {
  ByteWriter w;
  w.put(reply.id);
  w.put(reply.bytes);
  w.put(reply.device_address);
  return w.take();
}

Result<ObjectReply> decode_object(std::span<const std::byte> bytes, const std::string& who) {
  ByteReader r(bytes, "answer from " + who);
  ObjectReply reply;
  reply.id = r.get<std::uint32_t>();
  reply.bytes = r.get<std::uint64_t>();
  reply.device_address = r.get<std::uint64_t>();
  ACCORD_RETURN_IF_ERROR(r.finish());
  if (reply.id == 0) return invalid_error("answer from " + who + ": object id 0");
  return reply;
}

std::vector<std::byte> encode(const RegionReply& reply) {
  ByteWriter w;
  w.put(reply.id);
  w.put(static_cast<std::uint32_t>(reply.words.size()));
  for (std::uint64_t word : reply.words) w.put(word);
  return w.take();
}

Result<RegionReply> decode_region(std::span<const std::byte> bytes, std::uint32_t slots, const std::string& who) {
  ByteReader r(bytes, "answer from " + who);
  RegionReply reply;
  reply.id = r.get<std::uint32_t>();
  const std::uint32_t words = r.get_count(8);
  for (std::uint32_t i = 0; i < words && r.ok(); ++i) reply.words.push_back(r.get<std::uint64_t>());
  ACCORD_RETURN_IF_ERROR(r.finish());
  if (reply.id == 0) return invalid_error("answer from " + who + ": object id 0");
  if (!reply.words.empty() && reply.words.size() != slots)
    return invalid_error("answer from " + who + ": " + std::to_string(reply.words.size()) +
                         " completion words for a region of " + std::to_string(slots) + " slots");
  return reply;
}

std::vector<std::byte> encode(const AdmitRequest& request) {
  ByteWriter w;
  w.put(request.bytes);
  put_info(w, request.home);
  w.put(static_cast<std::uint8_t>(request.kind));
  return w.take();
}

Result<AdmitRequest> decode_admit(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "admit request");
  AdmitRequest request;
  request.bytes = r.get<std::uint64_t>();
  request.home = get_info(r);
  const auto kind = r.get<std::uint8_t>();
  ACCORD_RETURN_IF_ERROR(r.finish());
  if (kind > static_cast<std::uint8_t>(AdmitKind::GpuMemory))
    return invalid_error("admit request: unknown kind " + std::to_string(kind));
  request.kind = static_cast<AdmitKind>(kind);
  return request;
}

std::vector<std::byte> encode(const devices::CodeImage& image, const KernelContract& contract) {
  ByteWriter w;
  w.put(static_cast<std::uint8_t>(image.kind));
  w.put_string(image.name);
  w.put_string(image.plugin_path);
  w.put(static_cast<std::uint8_t>(image.device.kind));
  w.put(static_cast<std::int32_t>(image.device.ordinal));
  w.put_bytes(image.image);
  put_dims(w, image.grid);
  put_dims(w, image.block);
  w.put(image.shared_bytes);
  w.put(static_cast<std::uint32_t>(contract.bindings.size()));
  for (const BindingContract& b : contract.bindings) {
    w.put(static_cast<std::uint64_t>(b.bytes));
    w.put(static_cast<std::uint64_t>(b.alignment));
    w.put(static_cast<std::uint8_t>(b.access));
    w.put_string(b.layout);
  }
  w.put_bytes(contract.constants);
  return w.take();
}

Result<LoadRequest> decode_load(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "load request");
  LoadRequest request;
  const auto kind = r.get<std::uint8_t>();
  if (kind > static_cast<std::uint8_t>(devices::CodeImage::Kind::Plugin)) r.fail("code kind");
  request.image.kind = static_cast<devices::CodeImage::Kind>(kind);
  request.image.name = r.get_string(kMaxText);
  request.image.plugin_path = r.get_string(kMaxText);
  const auto device_kind = r.get<std::uint8_t>();
  if (device_kind > static_cast<std::uint8_t>(DeviceKind::Npu)) r.fail("device kind");
  request.image.device.kind = static_cast<DeviceKind>(device_kind);
  request.image.device.ordinal = r.get<std::int32_t>();
  request.image.image = r.get_bytes(std::size_t{1} << 30);
  get_dims(r, request.image.grid);
  get_dims(r, request.image.block);
  request.image.shared_bytes = r.get<std::uint32_t>();
  const std::uint32_t bindings = r.get_count(21);
  for (std::uint32_t i = 0; i < bindings && r.ok(); ++i) {
    BindingContract b;
    b.bytes = static_cast<std::size_t>(r.get<std::uint64_t>());
    b.alignment = static_cast<std::size_t>(r.get<std::uint64_t>());
    b.access = get_access(r);
    b.layout = r.get_string(kMaxText);
    request.contract.bindings.push_back(std::move(b));
  }
  request.contract.constants = r.get_bytes(1 << 20);
  ACCORD_RETURN_IF_ERROR(r.finish());
  return request;
}

std::vector<std::byte> encode(const WireRegion& region) {
  ByteWriter w;
  w.put(region.slots);
  w.put(region.priority);
  w.put(region.tenant);
  w.put(static_cast<std::uint32_t>(region.operations.size()));
  for (const WireOperation& op : region.operations) {
    w.put(static_cast<std::uint8_t>(op.kind));
    w.put(static_cast<std::uint8_t>(op.lane));
    w.put(op.fill_value);
    w.put(op.code);
    w.put(op.node);
    w.put(static_cast<std::uint32_t>(op.bindings.size()));
    for (const WireBinding& b : op.bindings) {
      w.put(static_cast<std::uint8_t>(b.ref));
      w.put(b.id);
      w.put(b.address);
      w.put(b.offset);
      w.put(b.length);
      w.put(static_cast<std::uint8_t>(b.access));
    }
  }
  w.put(static_cast<std::uint32_t>(region.edges.size()));
  for (const devices::OperationEdge& e : region.edges) {
    w.put(e.before);
    w.put(e.after);
  }
  return w.take();
}

Result<WireRegion> decode_lower(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "lower request");
  WireRegion region;
  region.slots = r.get<std::uint32_t>();
  region.priority = r.get<std::int32_t>();
  region.tenant = r.get<std::uint64_t>();
  const std::uint32_t operations = r.get_count(15);
  region.operations.reserve(operations);
  for (std::uint32_t i = 0; i < operations && r.ok(); ++i) {
    WireOperation op;
    const auto kind = r.get<std::uint8_t>();
    if (kind > static_cast<std::uint8_t>(devices::OpKind::Kernel)) r.fail("operation kind");
    op.kind = static_cast<devices::OpKind>(kind);
    op.lane = get_lane(r);
    op.fill_value = r.get<std::uint8_t>();
    op.code = r.get<std::uint32_t>();
    op.node = r.get<std::uint32_t>();
    const std::uint32_t bindings = r.get_count(30);
    for (std::uint32_t j = 0; j < bindings && r.ok(); ++j) {
      WireBinding b;
      const auto ref = r.get<std::uint8_t>();
      if (ref > static_cast<std::uint8_t>(BindingRef::Admission)) r.fail("binding reference");
      b.ref = static_cast<BindingRef>(ref);
      b.id = r.get<std::uint32_t>();
      b.address = r.get<std::uint64_t>();
      b.offset = r.get<std::uint64_t>();
      b.length = r.get<std::uint64_t>();
      b.access = get_access(r);
      op.bindings.push_back(b);
    }
    region.operations.push_back(std::move(op));
  }
  const std::uint32_t edges = r.get_count(8);
  for (std::uint32_t i = 0; i < edges && r.ok(); ++i) {
    devices::OperationEdge e;
    e.before = r.get<std::uint32_t>();
    e.after = r.get<std::uint32_t>();
    if (e.before >= operations || e.after >= operations) r.fail("edge out of range");
    region.edges.push_back(e);
  }
  ACCORD_RETURN_IF_ERROR(r.finish());
  return region;
}

std::vector<std::byte> encode(const ReleaseRequest& request) {
  ByteWriter w;
  w.put(static_cast<std::uint8_t>(request.kind));
  w.put(request.id);
  return w.take();
}

Result<ReleaseRequest> decode_release(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "release request");
  ReleaseRequest request;
  const auto kind = r.get<std::uint8_t>();
  if (kind < 1 || kind > static_cast<std::uint8_t>(ReleaseKind::Region)) r.fail("release kind");
  request.kind = static_cast<ReleaseKind>(kind);
  request.id = r.get<std::uint32_t>();
  ACCORD_RETURN_IF_ERROR(r.finish());
  return request;
}

std::vector<std::byte> encode_u64(std::uint64_t value) {
  ByteWriter w;
  w.put(value);
  return w.take();
}

Result<std::uint64_t> decode_u64(std::span<const std::byte> bytes, const std::string& who) {
  ByteReader r(bytes, "answer from " + who);
  const auto value = r.get<std::uint64_t>();
  ACCORD_RETURN_IF_ERROR(r.finish());
  return value;
}

}  // namespace accord::executor
