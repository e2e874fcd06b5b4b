// A kernel that faults (illegal address) fails its region with Execution naming the call
// and reports the GPU lost once (ARCHITECTURE.md, devices: device loss). The fault is
// sticky for the process's primary context, so the work runs in a child process (this
// executable again, running the hidden case below) and the other tests keep a healthy
// GPU. Tagged [gpu].
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>

#include "tests/unit/devices/cuda/cuda_test_support.h"

extern char** environ;

namespace accord::devices::cuda {
namespace {

using namespace testing;

constexpr const char* kChildCase = "a faulting kernel fails its region and loses the GPU (child process)";

TEST_CASE("a faulting kernel fails its region with Execution and reports the GPU lost", "[cuda][gpu][fault]") {
  {
    ACCORD_CUDA_TEST_GPU(device);  // skip here, not in the child, when there is no GPU
    static_cast<void>(device);
  }
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  std::array<char, 4096> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  REQUIRE(n > 0);
  std::string name = kChildCase;
  std::array<char*, 3> argv{self.data(), name.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, self.data(), nullptr, nullptr, argv.data(), environ) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("the child's report is above; it ran: " << self.data() << " \"" << kChildCase << "\"");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a faulting kernel fails its region and loses the GPU (child process)", "[.][cuda-fault-child]") {
  ACCORD_CUDA_TEST_GPU(device);
  ACCORD_CUDA_TEST_KERNELS(ptx, "kernels.ptx");
  RecordingListener listener;
  device.attach(listener);
  KernelContract contract;
  contract.bindings = {{4, 4, Access::ReadWrite, "unused"}};
  auto fault = device.load(gpu_image(ptx, "accord_test_fault"), contract);
  INFO(fault.status().to_string());
  REQUIRE(fault.ok());
  auto memory = device.allocate({64, MemoryPlacement::gpu_local(0)});
  REQUIRE(memory.ok());
  const std::array binding{bind(*memory.value(), Access::ReadWrite, 0, 4)};
  const Operation op = kernel_op(LaneKind::Compute, *fault.value(), binding);
  const auto region = lower(device, std::span<const Operation>(&op, 1), {}, 2);

  RecordingSink sink;
  launch_and_wait(device, *region, sink, 0);
  CHECK(sink.errors() == 1);
  const Status error = sink.last_error();
  INFO(error.to_string());
  REQUIRE_FALSE(error.ok());
  CHECK(error.kind() == ErrorKind::Execution);
  // The call that saw it: the stream (flag-only tail) or the event (event tail, or no flags).
  const std::string message(error.message());
  CHECK((message.find("cuStreamQuery") != std::string::npos || message.find("cuEventQuery") != std::string::npos));
  CHECK(std::string(error.message()).find("CUDA_ERROR_") != std::string::npos);
  REQUIRE(listener.wait_for(1));
  CHECK(listener.first_cause().kind() == ErrorKind::DeviceLost);

  // Later work fails too (the context is gone) and the loss is not reported again.
  RecordingSink after;
  launch_and_wait(device, *region, after, 1);
  CHECK(after.errors() == 1);
  device.shut_down();
  CHECK(listener.calls() == 1);
}

}  // namespace
}  // namespace accord::devices::cuda
