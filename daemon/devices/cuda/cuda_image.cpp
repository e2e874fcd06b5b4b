// Reading GPU code images without the driver. The layouts are NVIDIA's, not documented
// as an ABI: the cubin e_flags split and the fatbin entry header were checked against
// nvcc 13.0 output; the driver's own verdict (cuModuleLoadDataEx) stays the final word.
#include "daemon/devices/cuda/cuda_image.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace accord::devices::cuda {
namespace {

template <class T>
bool read_at(std::span<const std::byte> bytes, std::size_t offset, T& out) noexcept {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));  // little-endian host assumed (x86_64, aarch64)
  return true;
}

std::string_view as_text(std::span<const std::byte> image) noexcept {
  return {reinterpret_cast<const char*>(image.data()), image.size()};
}

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint16_t kEmCuda = 190;

}  // namespace

std::string sm_name(SmVersion sm) { return "sm_" + std::to_string(sm); }

CudaImageFormat classify_image(std::span<const std::byte> image) noexcept {
  const std::string_view text = as_text(image);
  if (text.substr(0, 4) == "\x7f" "ELF") return CudaImageFormat::Cubin;
  std::uint32_t magic = 0;
  if (read_at(image, 0, magic) && magic == kFatbinMagic) return CudaImageFormat::Fatbin;
  if (text.find(".version") != std::string_view::npos || text.find(".target") != std::string_view::npos)
    return CudaImageFormat::Ptx;
  return CudaImageFormat::Unknown;
}

std::optional<SmVersion> cubin_sm(std::span<const std::byte> image) noexcept {
  if (classify_image(image) != CudaImageFormat::Cubin) return std::nullopt;
  std::uint8_t elf_class = 0;
  std::uint8_t abi_version = 0;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
  // ELF64: e_ident[EI_CLASS] at 4 (2 = 64-bit), e_ident[EI_ABIVERSION] at 8, e_machine
  // at 0x12, e_flags at 0x30.
  if (!read_at(image, 4, elf_class) || !read_at(image, 8, abi_version) || !read_at(image, 0x12, machine) ||
      !read_at(image, 0x30, flags) || elf_class != 2 || machine != kEmCuda)
    return std::nullopt;
  const SmVersion sm = static_cast<SmVersion>(abi_version >= 8 ? (flags >> 8) & 0xFFu : flags & 0xFFu);
  if (sm == 0) return std::nullopt;
  return sm;
}

std::optional<SmVersion> ptx_target_sm(std::span<const std::byte> image) {
  const std::string_view text = as_text(image);
  const std::size_t directive = text.find(".target");
  if (directive == std::string_view::npos) return std::nullopt;
  const std::size_t sm = text.find("sm_", directive);
  const std::size_t line_end = text.find('\n', directive);
  if (sm == std::string_view::npos || (line_end != std::string_view::npos && sm > line_end)) return std::nullopt;
  SmVersion value = 0;
  std::size_t i = sm + 3;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + (text[i] - '0');
  if (i == sm + 3) return std::nullopt;
  return value;
}

std::vector<FatbinEntry> fatbin_entries(std::span<const std::byte> image) {
  std::vector<FatbinEntry> entries;
  std::uint32_t magic = 0;
  std::uint16_t header_size = 0;
  std::uint64_t payload = 0;
  if (!read_at(image, 0, magic) || magic != kFatbinMagic || !read_at(image, 6, header_size) ||
      !read_at(image, 8, payload))
    return entries;
  const std::uint64_t end = std::min<std::uint64_t>(image.size(), std::uint64_t{header_size} + payload);
  std::uint64_t offset = header_size;
  while (offset + 32 <= end) {
    std::uint16_t kind = 0;
    std::uint32_t entry_header = 0;
    std::uint64_t entry_payload = 0;
    std::uint32_t arch = 0;
    if (!read_at(image, offset, kind) || !read_at(image, offset + 4, entry_header) ||
        !read_at(image, offset + 8, entry_payload) || !read_at(image, offset + 28, arch) || entry_header == 0)
      break;
    if (kind == 1 || kind == 2) entries.push_back({kind == 1, static_cast<SmVersion>(arch)});
    offset += std::uint64_t{entry_header} + entry_payload;
  }
  return entries;
}

bool cubin_runs_on(SmVersion code, SmVersion device) noexcept {
  return code / 10 == device / 10 && code % 10 <= device % 10;
}

bool ptx_compiles_for(SmVersion code, SmVersion device) noexcept { return code <= device; }

std::string describe_fatbin(const std::vector<FatbinEntry>& entries) {
  if (entries.empty()) return "no readable entries";
  std::string text;
  for (const FatbinEntry& e : entries) {
    if (!text.empty()) text += ", ";
    text += e.ptx ? "compute_" + std::to_string(e.sm) + " PTX" : sm_name(e.sm) + " code";
  }
  return text;
}

}  // namespace accord::devices::cuda
