// The suite's plumbing: registration of DEVICE_TEST_CASEs under the backend's tag, the
// gap lookup, opening a device through a backend's catalog entry, a listener that names
// the backend at the start of the run, and a check that every declared gap names a test.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "tests/conformance/device/device_test_case.h"

#include <cstdio>
#include <string>

namespace accord::devices::conformance {

const char* known_gap_reason() {
  const std::string name = Catch::getResultCapture().getCurrentTestName();
  for (const DeviceGap& gap : device_backend().gaps)
    if (name == gap.test_name) return gap.reason;
  return nullptr;
}

DeviceTestRegistrar::DeviceTestRegistrar(void (*invoker)(), const char* name, const char* tags,
                                         const Catch::SourceLineInfo& line) {
  const std::string all_tags = std::string("[device][") + device_backend().name + "]" + tags;
  const Catch::AutoReg registration(Catch::makeTestInvoker(invoker), line, Catch::StringRef(),
                                    Catch::NameAndTags{name, all_tags});
}

Result<std::unique_ptr<Device>> open_from_catalog(void (*register_backend)(BackendCatalog&),
                                                 const DeviceSettings& settings) {
  BackendCatalog catalog;
  register_backend(catalog);
  if (catalog.backends().size() != 1)
    return internal_error("a registration function added " + std::to_string(catalog.backends().size()) +
                          " backends to the catalog; expected 1");
  const Backend& backend = catalog.backends().front();
  ACCORD_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> devices,
                          backend.factory(BackendRequest{settings, /*named=*/true}));
  if (devices.empty()) return unsupported_error(backend.name + ": the backend opened no device");
  return std::move(devices.front());
}

namespace {

// A gap that names no test would silently stop guarding anything: a renamed test
// would run (and fail) again, or worse, the gap would outlive its reason unnoticed.
void every_gap_names_a_test() {
  const auto& tests = Catch::getRegistryHub().getTestCaseRegistry().getAllTests();
  for (const DeviceGap& gap : device_backend().gaps) {
    bool found = false;
    for (const Catch::TestCase& test : tests) found = found || test.name == gap.test_name;
    INFO("backend '" << device_backend().name << "' lists a gap for '" << gap.test_name
                     << "', which is not a test of the device conformance suite");
    CHECK(found);
  }
}
const DeviceTestRegistrar gap_check{&every_gap_names_a_test, "every declared gap names a test of the suite",
                                    "[gaps]", CATCH_INTERNAL_LINEINFO};

struct DeviceConformanceListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(const Catch::TestRunInfo& info) override {
    std::fprintf(stderr, "accord device conformance suite on the '%s' backend (%zu known gaps)\n",
                 device_backend().name, device_backend().gaps.size());
    TestEventListenerBase::testRunStarting(info);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(DeviceConformanceListener)

}  // namespace accord::devices::conformance
