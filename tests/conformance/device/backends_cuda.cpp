// The cuda backend in the device conformance suite: GPU 0 opened through the catalog entry
// (register_cuda), so where there is no driver or GPU every test skips with the factory's
// reason ("cuda: libcuda.so.1 not found (...)"). Its kernels are the PTX below (nvcc 13.0
// -ptx -arch=compute_75 of three extern "C" kernels, PTX ISA lowered to 7.0 and checked
// with ptxas -arch=sm_90), JIT-compiled by the driver at load.
//
// Run it through ctest (one process per case): the fault case leaves the process's
// primary context unusable, as a CUDA fault does, so cases after it in one process fail.
#include <cstring>
#include <string_view>

#include "tests/conformance/device/device_conformance.h"

namespace accord::devices {
void register_cuda(BackendCatalog& catalog);
}  // namespace accord::devices

namespace accord::devices::conformance {
namespace {

// add_f32(a, b, out, u32 count); sleep_us(marker, u32 microseconds); fault(victim).
constexpr std::string_view kPtx = R"PTX(.version 7.0
.target sm_75
.address_size 64
.visible .entry accord_conformance_add_f32(
	.param .u64 accord_conformance_add_f32_param_0,
	.param .u64 accord_conformance_add_f32_param_1,
	.param .u64 accord_conformance_add_f32_param_2,
	.param .u32 accord_conformance_add_f32_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<11>;
	ld.param.u64 	%rd1, [accord_conformance_add_f32_param_0];
	ld.param.u64 	%rd2, [accord_conformance_add_f32_param_1];
	ld.param.u64 	%rd3, [accord_conformance_add_f32_param_2];
	ld.param.u32 	%r2, [accord_conformance_add_f32_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;
$L__BB0_2:
	ret;
}
.visible .entry accord_conformance_sleep_us(
	.param .u64 accord_conformance_sleep_us_param_0,
	.param .u32 accord_conformance_sleep_us_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd5, [accord_conformance_sleep_us_param_0];
	ld.param.u32 	%r1, [accord_conformance_sleep_us_param_1];
	cvta.to.global.u64 	%rd1, %rd5;
	mov.u64 %rd4, %globaltimer;
	mul.wide.u32 	%rd3, %r1, 1000;
$L__BB1_1:
	mov.u64 %rd6, %globaltimer;
	sub.s64 	%rd7, %rd6, %rd4;
	setp.lt.u64 	%p1, %rd7, %rd3;
	@%p1 bra 	$L__BB1_1;
	mov.u32 	%r2, 1592381669;
	st.global.u32 	[%rd1], %r2;
	ret;
}
.visible .entry accord_conformance_fault(
	.param .u64 accord_conformance_fault_param_0
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;
	mov.u64 	%rd1, 16;
	mov.u32 	%r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}
)PTX";

Result<std::unique_ptr<Device>> make_cuda() { return open_from_catalog(&register_cuda); }

// One block of 256 threads: the suite's add_f32 counts are at most 256.
CodeImage kernel(const char* name, std::uint32_t threads) {
  CodeImage image;
  image.name = name;
  image.image.resize(kPtx.size());
  std::memcpy(image.image.data(), kPtx.data(), kPtx.size());
  image.block = {threads, 1, 1};
  return image;
}

constexpr DeviceGap kCudaGaps[] = {
    {"a failing kernel reports Execution once, and the device keeps working",
     "a CUDA kernel cannot fail without a sticky fault (trap, assert and bad addresses all poison the context), "
     "so there is no failing kernel that leaves the device working; the fault case covers failure"},
    {"a contract that does not match its kernel is Invalid, naming the kernel",
     "cuFuncGetParamInfo gives each parameter's offset and size but not how the kernel accesses it, so a contract "
     "declaring a written binding Read loads; binding count, pointer layout and constant bytes are checked "
     "(tests/unit/devices/cuda/cuda_code_test.cpp)"},
};

}  // namespace

const DeviceBackend& device_backend() {
  static const DeviceBackend backend = [] {
    DeviceBackend b;
    b.name = "cuda";
    b.make_device = &make_cuda;
    b.gaps = kCudaGaps;
    b.code.add_f32 = kernel("accord_conformance_add_f32", 256);
    b.code.sleep_us = kernel("accord_conformance_sleep_us", 1);
    b.code.fault = kernel("accord_conformance_fault", 1);
    return b;
  }();
  return backend;
}

}  // namespace accord::devices::conformance
