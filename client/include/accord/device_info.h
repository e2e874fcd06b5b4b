// What a runtime can say about its devices: identity, target, memory and state, as
// Runtime::devices() lists them (embedded: the engine's registry; daemon: ListDevices),
// and the GPU code a client loads (GpuKernelImage). Plain values: a snapshot taken when
// the call returned, never updated afterwards.
//
//   auto gpu = rt.gpu(0);                 // Unsupported "no gpu:0 here (devices: ...)"
//   if (gpu.ok() && gpu->state == DeviceState::Present) { ... gpu->target == "sm_90" ... }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accord/device_id.h"
#include "accord/status.h"

namespace accord {

enum class DeviceState : std::uint8_t {
  Present,  // work runs on it
  Lost,     // a fault, the watchdog or a driver reset: work on it fails with DeviceLost
  Absent,   // a backend of this build that found no device; only backend and reason set
};

constexpr const char* to_string(DeviceState state) noexcept {
  switch (state) {
    case DeviceState::Present: return "present";
    case DeviceState::Lost: return "lost";
    case DeviceState::Absent: return "absent";
  }
  return "?";
}

struct DeviceInfo {
  DeviceId id = DeviceId::host();  // "host", "gpu:0", "npu:1" (unset when absent)
  std::string backend;             // "host", "cuda", "level_zero", ...
  std::string name;                // "cuda:0 (NVIDIA H200)"; the backend when absent
  std::string target;              // what it executes: "x86_64", "sm_90"
  std::uint64_t memory_total = 0;  // device memory in bytes; 0 when it has none of its own
  std::uint64_t memory_free = 0;   // free device memory when listed; 0 when unknown
  std::string uuid;                // "GPU-xxxxxxxx-..." where the hardware has one
  DeviceState state = DeviceState::Present;
  std::string reason;              // why it is lost or absent; empty when present
  // Times it came back after a loss: accordd restarts a GPU's executor after a fault,
  // and new work runs again (what was made before the loss stays lost).
  std::uint64_t recoveries = 0;
};

// "host, gpu:0 (lost); absent: cuda: libcuda.so.1 not found", for messages.
std::string describe_devices(const std::vector<DeviceInfo>& devices);

// A GPU kernel as the client hands it over: PTX text, a cubin or a fatbin, with the
// entry symbol and the fixed launch shape every launch of it uses. The backend checks
// the image's target against the GPU and the entry's parameters against the contract
// (binding addresses in order, then the contract's constant bytes).
struct GpuKernelImage {
  std::vector<std::byte> image;                  // PTX (NUL-terminated or not), cubin, fatbin
  std::string entry;                             // the kernel's symbol (extern "C" name)
  std::array<std::uint32_t, 3> grid{1, 1, 1};    // blocks in x, y, z; each >= 1
  std::array<std::uint32_t, 3> block{1, 1, 1};   // threads per block in x, y, z; each >= 1
  std::uint32_t shared_bytes = 0;                // dynamic shared memory per block

  // Invalid for an empty image or entry, or a zero dimension.
  Status validate() const;
};

}  // namespace accord
