// The host backend in the device conformance suite: the host device opened through its
// catalog entry (plugins allowed), with the built-in accord.add_f32 and the test
// plugin's test.fail and test.sleep_us (tests/plugins/test_plugin.c) as its code.
#include <string>
#include <utility>

#include "accord/builtin_kernels.h"
#include "tests/conformance/device/device_conformance.h"

#ifndef ACCORD_TEST_PLUGIN_PATH
#define ACCORD_TEST_PLUGIN_PATH ""
#endif

namespace accord::devices {
void register_host(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::conformance {
namespace {

Result<std::unique_ptr<Device>> make_host() { return open_from_catalog(&register_host); }

CodeImage kernel(CodeImage::Kind kind, std::string name, std::string plugin_path = {}) {
  CodeImage image;
  image.kind = kind;
  image.name = std::move(name);
  image.plugin_path = std::move(plugin_path);
  return image;
}

constexpr DeviceGap kHostGaps[] = {
    {"a launch waits natively for a running predecessor",
     "does not wait natively: the host device launches synchronously, so a region's same-device "
     "predecessors have all finished before it is launched"},
    {"a fault makes the device lost and tells its listener once",
     "the host CPU cannot be made lost by a kernel: a failing host kernel is Execution and the device "
     "keeps working, so there is no fault kernel to give"},
};

}  // namespace

const DeviceBackend& device_backend() {
  static const DeviceBackend backend = [] {
    DeviceBackend b;
    b.name = "host";
    b.make_device = &make_host;
    b.gaps = kHostGaps;
    b.code.add_f32 = kernel(CodeImage::Kind::Builtin, std::string(builtin::kAddF32));
    // Without the test plugin the tests that need these fail, saying the kernel is missing.
    if (!std::string(ACCORD_TEST_PLUGIN_PATH).empty()) {
      b.code.fail = kernel(CodeImage::Kind::Plugin, "test.fail", ACCORD_TEST_PLUGIN_PATH);
      b.code.sleep_us = kernel(CodeImage::Kind::Plugin, "test.sleep_us", ACCORD_TEST_PLUGIN_PATH);
    }
    return b;
  }();
  return backend;
}

}  // namespace accord::devices::conformance
