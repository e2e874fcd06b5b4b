// GPU executors in the device conformance suite: ExecutorDevice (daemon/executor)
// serving the fake GPU of tests/unit/executor through fake_gpu_executor, so the proxy
// is held to the same Device contract as the backends it stands for. Its code is the
// fake's: fake.add_f32, fake.fail, fake.sleep_us and fake.fault.
#include <string>

#include "daemon/executor/executor_device.h"
#include "tests/conformance/device/device_conformance.h"

namespace accord::devices::conformance {
namespace {

Result<std::unique_ptr<Device>> make_executor() {
  executor::ExecutorOptions options;
  options.binary = FAKE_GPU_EXECUTOR_PATH;
  options.backend = "fake";
  options.hello_timeout = std::chrono::seconds(10);
  options.request_timeout = std::chrono::seconds(10);
  // As CUDA's flags do: a waiting thread sees launches end by their completion words.
  options.device_options["fake.words"] = "1";
  ACCORD_ASSIGN_OR_RETURN(std::unique_ptr<executor::ExecutorDevice> device, executor::ExecutorDevice::open(options));
  if (!device) return unsupported_error("fake_gpu_executor has no gpu:0");
  return std::unique_ptr<Device>(std::move(device));
}

CodeImage kernel(std::string name) {
  CodeImage image;
  image.name = std::move(name);
  return image;
}

// Memory crosses into the executor process as a descriptor: anonymous host memory with
// none cannot be admitted there (accordd's HostVisible memory is a memfd and can).
constexpr const char* kNoFd =
    "the suite's host-mapped double is anonymous memory with no descriptor, which cannot cross into the "
    "executor process (HostVisible memfd memory can: tests/unit/executor covers it)";
constexpr DeviceGap kExecutorGaps[] = {
    {"allocations are zeroed and at least as large as requested", kNoFd},
    {"memory freed and allocated again reads as zero", kNoFd},
    {"a device admits host-mapped memory of another device", kNoFd},
    {"an operation on admitted memory writes the home memory's bytes", kNoFd},
    {"a run with a diamond of edges computes every operation", kNoFd},
    {"a region of fills, copies and a kernel computes the right values", kNoFd},
    {"a launch waits natively for a running predecessor", kNoFd},
};

}  // namespace

const DeviceBackend& device_backend() {
  static const DeviceBackend backend = [] {
    DeviceBackend b;
    b.name = "fake";
    b.make_device = &make_executor;
    b.gaps = kExecutorGaps;
    b.code.add_f32 = kernel("fake.add_f32");
    b.code.fail = kernel("fake.fail");
    b.code.sleep_us = kernel("fake.sleep_us");
    b.code.fault = kernel("fake.fault");
    return b;
  }();
  return backend;
}

}  // namespace accord::devices::conformance
