// The null backend in the device conformance suite: the skeleton device (gpu:0) opened
// through its catalog entry. It holds no memory and runs no code, so every test that
// needs either is a gap below; what it has (identity, lowering, launch, teardown) must
// conform like any backend's.
#include "tests/conformance/device/device_conformance.h"

namespace accord::devices {
void register_null(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::conformance {
namespace {

Result<std::unique_ptr<Device>> make_null() { return open_from_catalog(&register_null); }

constexpr const char* kNoMemory = "the null device holds no memory";
constexpr const char* kReachesNoMemory = "the null device reaches no memory: admit() is always Unsupported";
constexpr const char* kNoCode = "the null device runs no code: load() is always Unsupported";

constexpr DeviceGap kNullGaps[] = {
    {"allocations are zeroed and at least as large as requested", kNoMemory},
    {"memory freed and allocated again reads as zero", kNoMemory},
    {"exported memory is a descriptor that maps the same bytes, or -1", kNoMemory},
    {"a run with a diamond of edges computes every operation", kNoMemory},
    {"a device admits host-mapped memory of another device", kReachesNoMemory},
    {"an operation on admitted memory writes the home memory's bytes", kReachesNoMemory},
    {"loaded code keeps its name and contract", kNoCode},
    {"a contract that does not match its kernel is Invalid, naming the kernel", kNoCode},
    {"a region of fills, copies and a kernel computes the right values", kNoCode},
    {"a failing kernel reports Execution once, and the device keeps working", kNoCode},
    {"a launch waits natively for a running predecessor",
     "does not wait natively: its regions complete inside launch(), so there is never a running predecessor"},
    {"a fault makes the device lost and tells its listener once",
     "the null device runs no code, so nothing can fault it, and it has no native state to lose"},
};

}  // namespace

const DeviceBackend& device_backend() {
  static const DeviceBackend backend = [] {
    DeviceBackend b;
    b.name = "null";
    b.make_device = &make_null;
    b.gaps = kNullGaps;
    return b;
  }();
  return backend;
}

}  // namespace accord::devices::conformance
