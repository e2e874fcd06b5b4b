// What a GPU code image holds, read without the driver: its format (cubin, fatbin, PTX)
// and the architectures it was built for, so load() can refuse code for another GPU
// with both targets named before the driver gives its terse CUDA_ERROR_NO_BINARY_FOR_GPU.
// Pure functions over bytes; thread-safe; tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace accord::devices::cuda {

enum class CudaImageFormat : std::uint8_t { Cubin, Fatbin, Ptx, Unknown };

// An architecture as a number: 90 for sm_90 (major * 10 + minor).
using SmVersion = int;

std::string sm_name(SmVersion sm);  // "sm_90"

// Cubin: an ELF file ("\x7fELF"); fatbin: magic 0xBA55ED50; PTX: text with a
// ".version" or ".target" directive; anything else is Unknown.
CudaImageFormat classify_image(std::span<const std::byte> image) noexcept;

// The SM of an NVIDIA cubin from its ELF header (e_machine EM_CUDA = 190). e_flags holds
// it in bits 0-7 up to ELF ABI version 7 and in bits 8-15 from version 8 (CUDA 12.8+,
// checked against nvcc 13.0: sm_80 -> 0x6005004, sm_90 -> 0x6005a04). nullopt when the
// image is not a 64-bit CUDA ELF.
std::optional<SmVersion> cubin_sm(std::span<const std::byte> image) noexcept;

// The architecture of a PTX module's ".target sm_XY" directive; nullopt without one.
std::optional<SmVersion> ptx_target_sm(std::span<const std::byte> image);

// One entry of a fatbin: machine code (a cubin) or PTX, and its architecture.
struct FatbinEntry {
  bool ptx = false;
  SmVersion sm = 0;
};
// The entries of a fatbin (header: magic, version, header size, payload size; each entry:
// kind 1 = PTX / 2 = ELF, header size, payload size, architecture at byte 28). Stops at
// the first entry that does not fit.
std::vector<FatbinEntry> fatbin_entries(std::span<const std::byte> image);

// Whether machine code for `code` runs on a device of `device`: same major, minor not
// above the device's (sm_80 code runs on sm_86, not on sm_90).
bool cubin_runs_on(SmVersion code, SmVersion device) noexcept;
// Whether PTX for `code` can be compiled for `device`: its target is not newer.
bool ptx_compiles_for(SmVersion code, SmVersion device) noexcept;

// "sm_80 code, compute_75 PTX" for error messages.
std::string describe_fatbin(const std::vector<FatbinEntry>& entries);

}  // namespace accord::devices::cuda
