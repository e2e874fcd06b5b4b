// Plugin kernels through HostDevice::load and HostPluginLoader, using the test plugins
// from tests/plugins: running a kernel, a failing kernel's report, and every refusal
// (unknown kernel, missing file, wrong sanitizer, policy, contract mismatch).
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/devices/host/host_plugin.h"
#include "host_test_support.h"

using namespace accord;
using namespace accord::devices;
using namespace accord::devices::host;
using namespace accord::devices::host::testing;

namespace {

const std::string kPlugin = ACCORD_TEST_PLUGIN_PATH;
const std::string kBadSanitizerPlugin = ACCORD_TEST_PLUGIN_BADSAN_PATH;

KernelContract scale_contract(float factor, std::uint32_t count) {
  KernelContract contract;
  contract.bindings = {{count * 4u, 4, Access::Read, "in"}, {count * 4u, 4, Access::Write, "out"}};
  append_constant(contract.constants, factor);
  append_constant(contract.constants, count);
  return contract;
}

KernelContract one_read_write(std::size_t bytes, std::vector<std::byte> constants = {}) {
  KernelContract contract;
  contract.bindings = {{bytes, 4, Access::ReadWrite, "state"}};
  contract.constants = std::move(constants);
  return contract;
}

Result<std::unique_ptr<LoadedCode>> load_plugin(HostDevice& device, const std::string& path, const std::string& kernel,
                                                const KernelContract& contract) {
  return device.load({CodeImage::Kind::Plugin, kernel, path}, contract);
}

}  // namespace

TEST_CASE("a plugin kernel runs through the same path as built-ins", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_plugin(device, kPlugin, "test.scale_f32", scale_contract(3.0f, 4));
  INFO(code.status().to_string());
  REQUIRE(code.ok());
  auto in = allocate(device, 16), out = allocate(device, 16);
  write_floats(*in, {1, -2, 0.5f, 10});
  const OperationBinding bindings[] = {bind(*in, Access::Read), bind(*out, Access::Write)};
  const Operation ops[] = {kernel_op(**code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  CHECK(read_floats(*out, 4) == std::vector<float>{3, -6, 1.5f, 30});
}

TEST_CASE("a failing plugin kernel reports Execution with its message", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_plugin(device, kPlugin, "test.fail", one_read_write(4));
  REQUIRE(code.ok());
  auto state = allocate(device, 4);
  const OperationBinding bindings[] = {bind(*state, Access::ReadWrite)};
  const Operation ops[] = {kernel_op(**code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  REQUIRE(sink.errors == 1);
  CHECK(sink.status.kind() == ErrorKind::Execution);
  CHECK_THAT(std::string(sink.status.message()),
             Catch::Contains("injected failure") && Catch::Contains("test.fail"));
}

TEST_CASE("test.sleep_us sleeps, then writes its marker", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  std::vector<std::byte> constants;
  append_constant(constants, std::uint32_t{1000});
  auto code = load_plugin(device, kPlugin, "test.sleep_us", one_read_write(4, constants));
  REQUIRE(code.ok());
  auto state = allocate(device, 4);
  const OperationBinding bindings[] = {bind(*state, Access::ReadWrite)};
  const Operation ops[] = {kernel_op(**code, bindings)};
  RecordingSink sink;
  lower_and_launch(device, ops, sink);
  CHECK(sink.done == 1);
  std::uint32_t marker = 0;
  std::memcpy(&marker, state->host_address(), sizeof(marker));
  CHECK(marker == 0x5EE9D0E5u);
}

TEST_CASE("an unknown plugin kernel is Invalid and lists the offered kernels", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_plugin(device, kPlugin, "test.nope", one_read_write(4));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(code.status().message()),
             Catch::Contains("test.nope") && Catch::Contains("test.scale_f32, test.fail, test.sleep_us"));
}

TEST_CASE("a missing plugin file is Unsupported and names the path", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  const std::string missing = "/nonexistent/accord/libmissing_plugin.so";
  auto code = load_plugin(device, missing, "test.fail", one_read_write(4));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Unsupported);
  CHECK_THAT(std::string(code.status().message()), Catch::Contains(missing));
}

TEST_CASE("a shared object that is not an Accord plugin is Unsupported", "[devices][host]") {
  // libc is loaded and is certainly not a plugin. getpid, not malloc: clang links its
  // sanitizer runtimes (malloc among them) into the executable, which glibc refuses to
  // dlopen, whereas no sanitizer intercepts getpid.
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&::getpid), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  HostDevice device{HostDeviceOptions{}};
  auto code = load_plugin(device, info.dli_fname, "test.fail", one_read_write(4));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Unsupported);
  CHECK_THAT(std::string(code.status().message()), Catch::Contains("not an Accord plugin"));
}

TEST_CASE("a plugin built with another sanitizer is refused", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  auto code = load_plugin(device, kBadSanitizerPlugin, "test.fail", one_read_write(4));
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Unsupported);
  CHECK_THAT(std::string(code.status().message()), Catch::Contains("sanitizer"));
}

TEST_CASE("plugins are refused when disabled or outside the allowlist", "[devices][host]") {
  SECTION("disabled") {
    HostDeviceOptions options;
    options.allow_plugins = false;
    HostDevice device{options};
    auto code = load_plugin(device, kPlugin, "test.fail", one_read_write(4));
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Unsupported);
    CHECK_THAT(std::string(code.status().message()), Catch::Contains("disabled"));
  }
  SECTION("not in the allowlist") {
    HostDeviceOptions options;
    options.plugin_paths = {"/opt/accord/plugins/other.so"};
    HostDevice device{options};
    auto code = load_plugin(device, kPlugin, "test.fail", one_read_write(4));
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Unsupported);
    CHECK_THAT(std::string(code.status().message()), Catch::Contains(kPlugin) && Catch::Contains("allowlist"));
  }
  SECTION("in the allowlist") {
    HostDeviceOptions options;
    options.plugin_paths = {"/opt/accord/plugins/other.so", kPlugin};
    HostDevice device{options};
    CHECK(load_plugin(device, kPlugin, "test.fail", one_read_write(4)).ok());
  }
  SECTION("a relative path") {
    HostDevice device{HostDeviceOptions{}};
    auto code = load_plugin(device, "libaccord_test_plugin.so", "test.fail", one_read_write(4));
    REQUIRE_FALSE(code.ok());
    CHECK(code.status().kind() == ErrorKind::Invalid);
  }
}

TEST_CASE("a plugin kernel's contract is checked at load and names the plugin", "[devices][host]") {
  HostDevice device{HostDeviceOptions{}};
  KernelContract contract = scale_contract(2.0f, 4);
  contract.bindings[1].access = Access::ReadWrite;
  auto code = load_plugin(device, kPlugin, "test.scale_f32", contract);
  REQUIRE_FALSE(code.ok());
  CHECK(code.status().kind() == ErrorKind::Invalid);
  CHECK_THAT(std::string(code.status().message()),
             Catch::Contains(kPlugin) && Catch::Contains("test.scale_f32") && Catch::Contains("binding 1"));
}

TEST_CASE("loaded code keeps its plugin library loaded, shared by path", "[devices][host]") {
  HostPluginLoader loader{HostDeviceOptions{}};
  CHECK(loader.loaded_library_count() == 0);
  auto first = loader.load(kPlugin, "test.fail", one_read_write(4));
  auto second = loader.load(kPlugin, "test.scale_f32", scale_contract(1.0f, 1));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(loader.loaded_library_count() == 1);
  std::unique_ptr<HostCode> fail = std::move(first).value();
  std::unique_ptr<HostCode> scale = std::move(second).value();
  fail.reset();
  CHECK(loader.loaded_library_count() == 1);
  // The remaining code still runs: its library stayed loaded.
  float in = 2.0f, out = 0.0f;
  const accord_plugin_buffer_v1_t buffers[] = {{&in, 4}, {&out, 4}};
  const auto& constants = scale->contract().constants;
  CHECK(scale->kernel().run(buffers, 2, constants.data(), constants.size(), nullptr, 0) == ACCORD_PLUGIN_OK);
  CHECK(out == 2.0f);
  scale.reset();
  CHECK(loader.loaded_library_count() == 0);
}
