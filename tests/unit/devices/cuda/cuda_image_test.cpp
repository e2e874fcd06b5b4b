// Reading GPU code images without a driver (cuda_image.cpp): format, cubin and PTX
// targets, fatbin entries and the compatibility rules load() applies. Uses the kernels
// nvcc built for these tests; hand-made headers cover the older ELF ABI.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_image.h"
#include "tests/unit/devices/cuda/cuda_test_support.h"

namespace accord::devices::cuda {
namespace {

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// A minimal ELF64 header of a CUDA cubin with the given ABI version and e_flags.
std::vector<std::byte> elf_header(std::uint8_t abi_version, std::uint32_t flags, std::uint16_t machine = 190) {
  std::vector<std::byte> bytes(64);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, abi_version};
  std::memcpy(bytes.data(), ident, sizeof(ident));
  std::memcpy(bytes.data() + 0x12, &machine, sizeof(machine));
  std::memcpy(bytes.data() + 0x30, &flags, sizeof(flags));
  return bytes;
}

TEST_CASE("cubins built by nvcc name their architecture", "[cuda][image]") {
  ACCORD_CUDA_TEST_KERNELS(sm80, "kernels_sm80.cubin");
  ACCORD_CUDA_TEST_KERNELS(sm90, "kernels_sm90.cubin");
  CHECK(classify_image(sm80) == CudaImageFormat::Cubin);
  CHECK(cubin_sm(sm80) == 80);
  CHECK(cubin_sm(sm90) == 90);
}

TEST_CASE("both ELF ABI layouts of e_flags are read", "[cuda][image]") {
  CHECK(cubin_sm(elf_header(7, 0x5a055a)) == 90);   // ABI 7: bits 0-7 (the sm_90 value older tools wrote)
  CHECK(cubin_sm(elf_header(8, 0x6005a04)) == 90);  // ABI 8: bits 8-15 (nvcc 13.0)
  CHECK(cubin_sm(elf_header(8, 0x6006402)) == 100);
  CHECK_FALSE(cubin_sm(elf_header(8, 0x6005a04, 62)).has_value());  // an x86-64 ELF is no cubin
  CHECK_FALSE(cubin_sm(bytes_of("\x7f" "ELF")).has_value());        // truncated
}

TEST_CASE("PTX is recognised and its target read", "[cuda][image]") {
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  CHECK(classify_image(ptx) == CudaImageFormat::Ptx);
  CHECK(ptx_target_sm(ptx) == 75);
  CHECK(ptx_target_sm(bytes_of(".version 8.0\n.target sm_90a\n")) == 90);
  CHECK_FALSE(ptx_target_sm(bytes_of(".version 8.0\n")).has_value());
}

TEST_CASE("fatbin entries list their code and PTX", "[cuda][image]") {
  ACCORD_CUDA_TEST_KERNELS(only, "kernels_sm80_only.fatbin");
  ACCORD_CUDA_TEST_KERNELS(both, "kernels_sm80_ptx75.fatbin");
  CHECK(classify_image(only) == CudaImageFormat::Fatbin);
  const std::vector<FatbinEntry> a = fatbin_entries(only);
  REQUIRE(a.size() == 1);
  CHECK_FALSE(a[0].ptx);
  CHECK(a[0].sm == 80);
  const std::vector<FatbinEntry> b = fatbin_entries(both);
  REQUIRE(b.size() == 2);
  CHECK(describe_fatbin(b) == "sm_80 code, compute_75 PTX");
}

TEST_CASE("machine code runs within its major architecture and PTX compiles forward", "[cuda][image]") {
  CHECK(cubin_runs_on(80, 80));
  CHECK(cubin_runs_on(80, 86));
  CHECK_FALSE(cubin_runs_on(86, 80));
  CHECK_FALSE(cubin_runs_on(80, 90));
  CHECK(ptx_compiles_for(75, 90));
  CHECK_FALSE(ptx_compiles_for(100, 90));
  CHECK(sm_name(90) == "sm_90");
}

TEST_CASE("bytes that are no GPU image are Unknown", "[cuda][image]") {
  CHECK(classify_image(bytes_of("hello")) == CudaImageFormat::Unknown);
  CHECK(classify_image({}) == CudaImageFormat::Unknown);
  CHECK(fatbin_entries(bytes_of("hello")).empty());
}

}  // namespace
}  // namespace accord::devices::cuda
