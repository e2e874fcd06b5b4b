// A stand-in libcuda for the tests that run without a GPU: it exports only
// cuGetProcAddress_v2, which hands out a handful of real functions (cuInit,
// cuDriverGetVersion, cuDeviceGetCount, cuGetErrorName, cuGetErrorString) and a shared
// "not supported" function for every other name. ACCORD_FAKE_CUDA (read at each call)
// steers it: "no-devices", "init-no-device", "missing=<name>", "old=<name>"; otherwise
// it reports one GPU that cannot be opened (cuDeviceGet is the "not supported" one).
// Events and streams are test-owned: a CUevent or CUstream is the address of an int
// holding the CUresult that cuEventQuery or cuStreamQuery answers, so completion can be
// driven without a GPU. Functions are handed
// out through other pointer types and ignore their arguments (fine on x86-64 and
// aarch64 calling conventions; this library exists only for tests).
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::string mode() {
  const char* m = std::getenv("ACCORD_FAKE_CUDA");
  return m != nullptr ? m : "";
}

CUresult fake_not_supported() { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult fake_init(unsigned) { return mode() == "init-no-device" ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS; }
CUresult fake_driver_version(int* version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult fake_device_count(int* count) {
  *count = mode() == "no-devices" ? 0 : 1;
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
  if (m == std::string("missing=") + symbol) {
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  if (m == std::string("old=") + symbol) {
    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_SUCCESS;
  }
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  if (std::strcmp(symbol, "cuInit") == 0)
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
