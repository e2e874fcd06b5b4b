// A stand-in libcuda for the tests that run without a GPU: it exports only
// cuGetProcAddress_v2, which hands out a handful of real functions (cuInit,
// cuDriverGetVersion, cuDeviceGetCount, cuGetErrorName, cuGetErrorString) and a shared
// "not supported" function for every other name. ACCORD_FAKE_CUDA (read at each call)
// steers it: "no-devices", "init-no-device", "missing=<name>", "old=<name>", "gpus=<N>"
// (comma-separated); without "gpus=" it reports one GPU that cannot be opened
// (cuDeviceGet is the "not supported" one). With "gpus=N", read when the symbols are
// resolved, it reports N GPUs that open and hands out the working memory functions of
// fake_libcuda_gpus.cpp, which says what they do and how tests steer and read them.
// Events and streams are test-owned: a CUevent or CUstream is the address of an int
// holding the CUresult that cuEventQuery or cuStreamQuery answers, so completion can be
// driven without a GPU. Functions are handed
// out through other pointer types and ignore their arguments (fine on x86-64 and
// aarch64 calling conventions; this library exists only for tests).
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/unit/devices/cuda/fake_libcuda_gpus.h"

namespace {

std::string mode() {
  const char* m = std::getenv("ACCORD_FAKE_CUDA");
  return m != nullptr ? m : "";
}

// True when the comma-separated mode holds `token`.
bool has(const std::string& m, const std::string& token) {
  return ("," + m + ",").find("," + token + ",") != std::string::npos;
}

// N of "gpus=N", or 0.
int gpus(const std::string& m) {
  const std::size_t at = ("," + m).find(",gpus=");
  return at == std::string::npos ? 0 : std::atoi(m.c_str() + at + 5);
}

CUresult fake_not_supported() { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult fake_init(unsigned) { return has(mode(), "init-no-device") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS; }
CUresult fake_driver_version(int* version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult fake_device_count(int* count) {
  const std::string m = mode();
  *count = has(m, "no-devices") ? 0 : gpus(m) > 0 ? gpus(m) : 1;
  return CUDA_SUCCESS;
}
CUresult fake_success() { return CUDA_SUCCESS; }
CUresult fake_event_query(CUevent event) {
  return static_cast<CUresult>(__atomic_load_n(reinterpret_cast<const int*>(event), __ATOMIC_ACQUIRE));
}
CUresult fake_error_name(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult fake_error_string(CUresult, const char** text) {
  *text = "the fake driver says no";
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  const std::string m = mode();
  *pfn = nullptr;
  if (has(m, std::string("missing=") + symbol)) {
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  if (has(m, std::string("old=") + symbol)) {
    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_SUCCESS;
  }
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  const int fake_gpus = gpus(m);
  if (fake_gpus > 0) accord_fake_cuda::set_gpu_count(fake_gpus);
  if (void* working = fake_gpus > 0 ? accord_fake_cuda::gpu_symbol(symbol) : nullptr; working != nullptr)
    *pfn = working;
  else if (std::strcmp(symbol, "cuInit") == 0)
    *pfn = reinterpret_cast<void*>(&fake_init);
  else if (std::strcmp(symbol, "cuDriverGetVersion") == 0)
    *pfn = reinterpret_cast<void*>(&fake_driver_version);
  else if (std::strcmp(symbol, "cuDeviceGetCount") == 0)
    *pfn = reinterpret_cast<void*>(&fake_device_count);
  else if (std::strcmp(symbol, "cuEventQuery") == 0 || std::strcmp(symbol, "cuStreamQuery") == 0)
    *pfn = reinterpret_cast<void*>(&fake_event_query);
  else if (std::strcmp(symbol, "cuCtxSetCurrent") == 0 || std::strcmp(symbol, "cuEventDestroy") == 0)
    *pfn = reinterpret_cast<void*>(&fake_success);
  else if (std::strcmp(symbol, "cuGetErrorName") == 0)
    *pfn = reinterpret_cast<void*>(&fake_error_name);
  else if (std::strcmp(symbol, "cuGetErrorString") == 0)
    *pfn = reinterpret_cast<void*>(&fake_error_string);
  else
    *pfn = reinterpret_cast<void*>(&fake_not_supported);
  return CUDA_SUCCESS;
}
