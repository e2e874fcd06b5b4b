// CudaCode: one kernel of a GPU code image loaded into a GPU's context (and into its
// tenant contexts when their regions need it) and
// checked against its contract (ARCHITECTURE.md, devices: cuda; code). The target is
// checked against the device (a cubin for another architecture is Invalid naming both),
// PTX is JIT-compiled by the driver with its error log kept, and the parameter layout
// reported by cuFuncGetParamInfo must be the contract's: one 8-byte pointer per binding,
// then the constant bytes.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/devices/cuda/cuda_handles.h"
#include "daemon/devices/cuda/cuda_image.h"
#include "daemon/devices/device.h"

namespace accord::devices::cuda {

class CudaCode final : public LoadedCode {
 public:
  // Loads `image` (a GPU image: image.image non-empty) on the GPU of `context`, whose
  // architecture is `device_sm`, and finds its kernel `image.name`. Blocks (JIT
  // compilation may take milliseconds). Thread-safe. Errors:
  //   Invalid: the contract fails validate(); a zero grid or block dimension; an image
  //     for another architecture (naming both); PTX the JIT refuses (with its log); a
  //     parameter layout that differs from the contract (naming the kernel and the
  //     parameter);
  //   Unsupported: an image that is neither PTX, cubin nor fatbin; a kernel the image
  //     lacks; a driver without cuFuncGetParamInfo (older than CUDA 12.4), since the
  //     contract could not be checked;
  //   the mapped kind of any other driver failure.
  // `other_contexts`: keep the image, so that function_in can load it into other
  // contexts of the GPU (cuda.tenant_contexts above 1).
  static Result<std::unique_ptr<CudaCode>> load(const CudaContext& context, SmVersion device_sm,
                                                const CodeImage& image, const KernelContract& contract,
                                                bool other_contexts = false);

  const std::string& name() const noexcept override { return name_; }
  const KernelContract& contract() const noexcept override { return contract_; }

  CUfunction function() const noexcept { return function_; }
  // The kernel in `context`, a context of the same GPU: function() in the one it was
  // loaded in; elsewhere the image loaded there on first use (which blocks), then kept.
  // Thread-safe. Errors: Unsupported when the image was not kept (load's
  // other_contexts); the mapped kind of a driver failure.
  Result<CUfunction> function_in(const CudaContext& context) const;
  const std::array<std::uint32_t, 3>& grid() const noexcept { return grid_; }
  const std::array<std::uint32_t, 3>& block() const noexcept { return block_; }
  std::uint32_t shared_bytes() const noexcept { return shared_bytes_; }
  // Byte offset of each kernel parameter in the parameter buffer a launch builds: the
  // binding pointers at 8 * i, then the contract's constant bytes.
  const std::vector<std::size_t>& parameter_offsets() const noexcept { return parameter_offsets_; }
  // Size of that buffer: 8 * bindings + constant bytes.
  std::size_t parameter_bytes() const noexcept { return 8 * contract_.bindings.size() + contract_.constants.size(); }

 private:
  CudaCode() = default;

  std::string name_;
  KernelContract contract_;
  UniqueCuModule module_;
  CUfunction function_ = nullptr;
  CUcontext home_ = nullptr;      // where module_ is loaded
  std::vector<std::byte> image_;  // kept for other contexts (NUL-terminated PTX), else empty
  struct Elsewhere {
    CUcontext context = nullptr;
    UniqueCuModule module;
    CUfunction function = nullptr;
  };
  mutable std::mutex elsewhere_mu_;
  mutable std::vector<Elsewhere> elsewhere_;  // elsewhere_mu_
  std::array<std::uint32_t, 3> grid_{1, 1, 1};
  std::array<std::uint32_t, 3> block_{1, 1, 1};
  std::uint32_t shared_bytes_ = 0;
  std::vector<std::size_t> parameter_offsets_;
};

}  // namespace accord::devices::cuda
