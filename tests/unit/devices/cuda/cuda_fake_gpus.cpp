// Fake GPUs for the CUDA unit tests (see cuda_fake_gpus.h).
#include "tests/unit/devices/cuda/cuda_fake_gpus.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <sstream>

namespace accord::devices::cuda::testing {

#ifdef ACCORD_CUDA_FAKE_DRIVER
FakeGpus::FakeGpus(int count, const std::vector<std::string>& controls, CudaDeviceOptions options) {
  const std::string mode = "gpus=" + std::to_string(count);
  ::setenv("ACCORD_FAKE_CUDA", mode.c_str(), 1);
  options.loader.library = ACCORD_CUDA_FAKE_DRIVER;
  auto loaded = CudaSymbols::load(options.loader);
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  syms_ = std::move(loaded).value();
  // The library is loaded already: RTLD_NOLOAD only takes another reference to it.
  // RTLD_NODELETE keeps it mapped for the rest of the process, as a real driver stays:
  // its state is never destroyed (completion threads may call late), and once unmapped
  // that state would be unreachable and LeakSanitizer would call it a leak.
  library_ = UniqueDlHandle(::dlopen(ACCORD_CUDA_FAKE_DRIVER, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE));
  REQUIRE(library_);
  control_ = reinterpret_cast<void (*)(const char*)>(library_.symbol("accord_fake_cuda_control"));
  log_ = reinterpret_cast<const char* (*)()>(library_.symbol("accord_fake_cuda_log"));
  REQUIRE(control_ != nullptr);
  REQUIRE(log_ != nullptr);
  control("fail=");
  control("peer=1");
  for (const std::string& setting : controls) control(setting);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto device = CudaDevice::open(syms_, ordinal, options);
    INFO(device.status().to_string());
    REQUIRE(device.ok());
    devices_.push_back(std::move(device).value());
  }
  opening_log_ = log();
  control("clear");
}
#else
FakeGpus::FakeGpus(int, const std::vector<std::string>&, CudaDeviceOptions) {
  FAIL("the stand-in driver was not built");
}
#endif

FakeGpus::~FakeGpus() {
  devices_.clear();
  if (control_ != nullptr) {
    control_("fail=");
    control_("peer=1");
    control_("graphs=0");
    control_("mps=0");
    control_("ignore=");
    control_("clear");
  }
  ::unsetenv("ACCORD_FAKE_CUDA");
}

void FakeGpus::control(const std::string& setting) { control_(setting.c_str()); }

std::vector<std::string> FakeGpus::log() const {
  std::vector<std::string> lines;
  std::istringstream in(log_());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int FakeGpus::count(std::string_view prefix) const {
  int n = 0;
  for (const std::string& line : log())
    if (line.starts_with(prefix)) ++n;
  return n;
}

int FakeGpus::position(std::string_view prefix) const {
  const std::vector<std::string> lines = log();
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with(prefix)) return static_cast<int>(i);
  return -1;
}

}  // namespace accord::devices::cuda::testing
