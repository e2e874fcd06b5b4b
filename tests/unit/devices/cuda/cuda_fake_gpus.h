// CUDA devices opened on the stand-in driver's working fake GPUs (fake_libcuda_gpus.cpp),
// for the tests of admission and import that run without a GPU: the real CudaDevice,
// CudaMemory and admissions, over a driver that only logs what it is asked. Not
// thread-safe itself (one test thread); the devices it opens are as thread-safe as ever.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/api/unique_dl_handle.h"
#include "daemon/devices/cuda/cuda_device.h"

namespace accord::devices::cuda::testing {

class FakeGpus {
 public:
  // Sets ACCORD_FAKE_CUDA=gpus=<count>, loads the stand-in driver, applies `controls`
  // (as control() takes them), opens every GPU with `options` (its driver library
  // replaced by the stand-in; REQUIREs success), then empties the driver's log.
  explicit FakeGpus(int count = 2, const std::vector<std::string>& controls = {}, CudaDeviceOptions options = {});
  // Closes the devices, resets the driver's controls and unsets ACCORD_FAKE_CUDA.
  ~FakeGpus();
  FakeGpus(const FakeGpus&) = delete;
  FakeGpus& operator=(const FakeGpus&) = delete;

  CudaDevice& gpu(int ordinal) { return *devices_.at(static_cast<std::size_t>(ordinal)); }
  // Closes every device now (the driver stays loaded, its log kept).
  void close_devices() { devices_.clear(); }
  const CudaSymbols& syms() const { return *syms_; }
  // The driver, for opening more devices on it (as another runtime of the process would).
  std::shared_ptr<const CudaSymbols> shared_syms() const { return syms_; }

  // accord_fake_cuda_control: "peer=0", "peer=1", "mps=0", "mps=1", "fail=<entry point>", "fail=", "graphs=1",
  // "graphs=0", "ignore=<entry point>", "ignore=", "clear".
  void control(const std::string& setting);
  // The driver's log since the last "clear", one call per line.
  std::vector<std::string> log() const;
  // The log of opening the GPUs (the constructor clears it after).
  const std::vector<std::string>& opening_log() const { return opening_log_; }
  // Lines of the log that start with `prefix`.
  int count(std::string_view prefix) const;
  // The position of the first line starting with `prefix`, or -1.
  int position(std::string_view prefix) const;

 private:
  std::shared_ptr<const CudaSymbols> syms_;
  std::vector<std::unique_ptr<CudaDevice>> devices_;
  UniqueDlHandle library_;  // a second reference to the library syms_ opened
  std::vector<std::string> opening_log_;
  void (*control_)(const char*) = nullptr;
  const char* (*log_)() = nullptr;
};

}  // namespace accord::devices::cuda::testing
