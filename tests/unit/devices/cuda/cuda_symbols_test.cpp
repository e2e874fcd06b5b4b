// Opening the driver where there may be none (cuda_symbols.cpp, cuda_registration.cpp):
// a missing library, the link-time stub, and the catalog entry with its options. These
// run on every machine; on a GPU machine the real library is not touched here.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/cuda/cuda_options.h"
#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::devices {
void register_cuda(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::cuda {
namespace {

constexpr const char* kNoSuchLibrary = "libaccord_no_such_cuda.so.1";

Result<std::vector<std::unique_ptr<Device>>> open_through_catalog(const DeviceSettings& settings) {
  BackendCatalog catalog;
  register_cuda(catalog);
  REQUIRE(catalog.backends().size() == 1);
  CHECK(catalog.backends()[0].name == "cuda");
  return catalog.backends()[0].factory(BackendRequest{settings, false});
}

TEST_CASE("a missing driver library is Unsupported, naming it and dlerror's reason", "[cuda][symbols]") {
  CudaLoaderOptions options;
  options.library = kNoSuchLibrary;
  const auto loaded = CudaSymbols::load(options);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().kind() == ErrorKind::Unsupported);
  const std::string message(loaded.status().message());
  CHECK(message.starts_with(std::string("cuda: ") + kNoSuchLibrary + " not found ("));
  CHECK(message.find("cannot open shared object file") != std::string::npos);
}

TEST_CASE("the catalog's cuda factory reports an absent driver as the backend's reason", "[cuda][symbols]") {
  DeviceSettings settings;
  settings.options["cuda.library"] = kNoSuchLibrary;
  const auto opened = open_through_catalog(settings);
  REQUIRE_FALSE(opened.ok());
  CHECK(std::string(opened.status().message()).starts_with(std::string("cuda: ") + kNoSuchLibrary + " not found ("));
}

TEST_CASE("the link-time stub library is refused with the driver's own code", "[cuda][symbols]") {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) {
    WARN("skipped: no CUDA stub library at " << stub);
    return;
  }
  CudaLoaderOptions options;
  options.library = stub;
  const auto loaded = CudaSymbols::load(options);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().kind() == ErrorKind::Unsupported);
  const std::string message(loaded.status().message());
  INFO(message);
  CHECK(message.starts_with("cuda: "));
  CHECK(message.find("CUDA_ERROR_STUB_LIBRARY") != std::string::npos);
}

TEST_CASE("unknown and malformed cuda options are Invalid before the driver is opened", "[cuda][options]") {
  DeviceSettings settings;
  settings.options["cuda.library"] = kNoSuchLibrary;
  SECTION("an unknown key") {
    settings.options["cuda.colour"] = "blue";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("cuda.colour") != std::string::npos);
  }
  SECTION("a count that is not a number") {
    settings.options["cuda.streams_per_lane"] = "four";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
  }
  SECTION("a count out of range") {
    settings.options["cuda.streams_per_lane"] = "0";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("1..64") != std::string::npos);
  }
  SECTION("more work queues than the driver has") {
    settings.options["cuda.max_connections"] = "33";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("0..32") != std::string::npos);
  }
  SECTION("a completion mode that does not exist") {
    settings.options["cuda.completion"] = "interrupt";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("cuda.completion") != std::string::npos);
  }
  SECTION("a flag writer that does not exist") {
    settings.options["cuda.flag_write"] = "host_function";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("cuda.flag_write = 'host_function'") != std::string::npos);
  }
  SECTION("a context choice that does not exist") {
    settings.options["cuda.context"] = "green";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("cuda.context = 'green' is not primary, own or auto") !=
          std::string::npos);
  }
  SECTION("tenant contexts out of range") {
    settings.options["cuda.tenant_contexts"] = GENERATE("0", "49");
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Invalid);
    CHECK(std::string(opened.status().message()).find("cuda.tenant_contexts") != std::string::npos);
    CHECK(std::string(opened.status().message()).find("1..48") != std::string::npos);
  }
  SECTION("options of other backends are not ours") {
    settings.options["null.devices"] = "2";
    const auto opened = open_through_catalog(settings);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().kind() == ErrorKind::Unsupported);  // the absent driver, not the option
  }
}

TEST_CASE("default cuda options are valid and out-of-range ones are not", "[cuda][options]") {
  CudaDeviceOptions options;
  CHECK(options.validate().ok());
  options.poll.max_sleep = std::chrono::microseconds(0);
  CHECK_FALSE(options.validate().ok());
  options = CudaDeviceOptions{};
  options.loader.library.clear();
  CHECK_FALSE(options.validate().ok());
}

}  // namespace
}  // namespace accord::devices::cuda

// --- the stand-in driver (fake_libcuda.cpp): the whole loading path without a GPU ---

#ifdef ACCORD_CUDA_FAKE_DRIVER
namespace accord::devices::cuda {
namespace {

// Sets ACCORD_FAKE_CUDA for the fake driver while alive.
class FakeDriverMode {
 public:
  explicit FakeDriverMode(const char* mode) { ::setenv("ACCORD_FAKE_CUDA", mode, 1); }
  ~FakeDriverMode() { ::unsetenv("ACCORD_FAKE_CUDA"); }
  FakeDriverMode(const FakeDriverMode&) = delete;
  FakeDriverMode& operator=(const FakeDriverMode&) = delete;
};

Result<std::shared_ptr<const CudaSymbols>> load_fake() {
  CudaLoaderOptions options;
  options.library = ACCORD_CUDA_FAKE_DRIVER;
  return CudaSymbols::load(options);
}

std::string factory_error(const char* mode) {
  const FakeDriverMode fake(mode);
  DeviceSettings settings;
  settings.options["cuda.library"] = ACCORD_CUDA_FAKE_DRIVER;
  const auto opened = open_through_catalog(settings);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().kind() == ErrorKind::Unsupported);
  return std::string(opened.status().message());
}

TEST_CASE("every table entry is resolved through cuGetProcAddress", "[cuda][symbols][fake]") {
  const FakeDriverMode fake("");
  const auto loaded = load_fake();
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  const CudaSymbols& syms = *loaded.value();
  CHECK(syms.driver_version() == CUDA_VERSION);
#define ACCORD_CU_REQUIRED(name) CHECK(syms.name != nullptr);
#define ACCORD_CU_OPTIONAL(name) CHECK(syms.name != nullptr);
#include "daemon/devices/cuda/cuda_symbol_table.inc"
#undef ACCORD_CU_REQUIRED
#undef ACCORD_CU_OPTIONAL
}

TEST_CASE("loading asks for cuda.max_connections work queues unless the process chose its own",
          "[cuda][symbols][fake]") {
  const FakeDriverMode fake("");
  const char* before = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const std::string saved = before != nullptr ? before : "";
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  CudaLoaderOptions options;
  options.library = ACCORD_CUDA_FAKE_DRIVER;
  options.max_connections = 24;
  REQUIRE(CudaSymbols::load(options).ok());
  REQUIRE(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") != nullptr);
  CHECK(std::string(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) == "24");
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4", 1);  // the process's own choice wins
  REQUIRE(CudaSymbols::load(options).ok());
  CHECK(std::string(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) == "4");
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  options.max_connections = 0;  // the driver's default: nothing set
  REQUIRE(CudaSymbols::load(options).ok());
  CHECK(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") == nullptr);
  if (before != nullptr) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", saved.c_str(), 1);
}

TEST_CASE("a configured cuda.max_connections replaces the work queues the environment names",
          "[cuda][symbols][fake]") {
  // A GPU executor inherits CUDA_DEVICE_MAX_CONNECTIONS from its parent's loader; the
  // value configured for it must win.
  const FakeDriverMode fake("");
  const char* before = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 1);
  DeviceSettings settings;
  settings.options["cuda.library"] = ACCORD_CUDA_FAKE_DRIVER;
  settings.options["cuda.max_connections"] = "2";
  static_cast<void>(open_through_catalog(settings));  // the variable is set as the driver loads
  REQUIRE(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") != nullptr);
  CHECK(std::string(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) == "2");
  settings.options["cuda.max_connections"] = "0";  // configured: the driver's default
  static_cast<void>(open_through_catalog(settings));
  CHECK(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") == nullptr);
  if (before != nullptr)
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", saved.c_str(), 1);
  else
    ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

TEST_CASE("a missing required entry point makes the driver unusable, naming it", "[cuda][symbols][fake]") {
  {
    const FakeDriverMode fake("missing=cuMemCreate");
    const auto loaded = load_fake();
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().kind() == ErrorKind::Unsupported);
    CHECK(loaded.status().message() == "cuda: driver entry point cuMemCreate is missing (not exported by the driver)");
  }
  {
    const FakeDriverMode fake("old=cuGraphLaunch");
    const auto loaded = load_fake();
    REQUIRE_FALSE(loaded.ok());
    CHECK(std::string(loaded.status().message()).find("cuGraphLaunch is missing (the driver is older") !=
          std::string::npos);
  }
}

TEST_CASE("a missing optional entry point leaves it null and the driver usable", "[cuda][symbols][fake]") {
  const FakeDriverMode fake("missing=cuFuncGetParamInfo");
  const auto loaded = load_fake();
  REQUIRE(loaded.ok());
  CHECK(loaded.value()->cuFuncGetParamInfo == nullptr);
  CHECK(loaded.value()->cuModuleGetFunction != nullptr);
}

TEST_CASE("a driver without GPUs makes the backend absent with 'no CUDA devices'", "[cuda][symbols][fake]") {
  CHECK(factory_error("no-devices") == "cuda: no CUDA devices");
  CHECK(factory_error("init-no-device") == "cuda: no CUDA devices (cuInit: CUDA_ERROR_NO_DEVICE)");
}

TEST_CASE("a GPU that cannot be opened makes the backend absent, naming the call", "[cuda][symbols][fake]") {
  const std::string message = factory_error("");
  INFO(message);
  CHECK(message.starts_with("cuda: cuDeviceGet: CUDA_ERROR_FAKE (the fake driver says no): opening gpu:0"));
}

}  // namespace
}  // namespace accord::devices::cuda
#endif
