// Loading a GPU kernel: target check, module load (JIT for PTX), entry point lookup,
// parameter layout check. The target is checked from the image first because the
// driver's answer for a wrong target (CUDA_ERROR_NO_BINARY_FOR_GPU) names neither.
#include "daemon/devices/cuda/cuda_code.h"

#include <algorithm>
#include <string>

#include "daemon/devices/cuda/cuda_status.h"

namespace accord::devices::cuda {
namespace {

constexpr std::size_t kJitLogBytes = 16 * 1024;
constexpr std::size_t kPointerBytes = 8;
// A kernel has at most 32764 bytes of parameters; stop counting long before looping forever.
constexpr std::size_t kMaxParameters = 8192;

// Invalid (naming both targets) when `image` cannot run on `device_sm`.
Status check_target(const std::string& what, CudaImageFormat format, std::span<const std::byte> image,
                    SmVersion device_sm) {
  const std::string device = sm_name(device_sm);
  switch (format) {
    case CudaImageFormat::Cubin: {
      const std::optional<SmVersion> sm = cubin_sm(image);
      if (!sm) return invalid_error(what + ": the cubin is not a 64-bit CUDA ELF file");
      if (!cubin_runs_on(*sm, device_sm))
        return invalid_error(what + ": the cubin is " + sm_name(*sm) + " code, which cannot run on this " + device +
                             " device");
      return Status();
    }
    case CudaImageFormat::Fatbin: {
      const std::vector<FatbinEntry> entries = fatbin_entries(image);
      if (entries.empty()) return Status();  // unreadable here: let the driver judge
      for (const FatbinEntry& e : entries)
        if (e.ptx ? ptx_compiles_for(e.sm, device_sm) : cubin_runs_on(e.sm, device_sm)) return Status();
      return invalid_error(what + ": the fatbin holds " + describe_fatbin(entries) + ", none of which runs on this " +
                           device + " device");
    }
    case CudaImageFormat::Ptx: {
      const std::optional<SmVersion> sm = ptx_target_sm(image);
      if (sm && !ptx_compiles_for(*sm, device_sm))
        return invalid_error(what + ": the PTX targets " + sm_name(*sm) + ", newer than this " + device + " device");
      return Status();
    }
    case CudaImageFormat::Unknown: break;
  }
  return unsupported_error(what + ": the image is neither PTX, a cubin nor a fatbin");
}

// The contract's layout: parameter i < bindings is an 8-byte pointer at 8 * i; the rest
// lie inside the constant bytes, and the last one ends where they end.
Status check_layout(const std::string& what, const CudaSymbols& syms, CUfunction function,
                    const KernelContract& contract, std::vector<std::size_t>& offsets) {
  if (syms.cuFuncGetParamInfo == nullptr)
    return unsupported_error(what + ": the driver has no cuFuncGetParamInfo (CUDA 12.4+), so its parameter layout "
                                    "cannot be checked against the contract");
  const std::size_t bindings = contract.bindings.size();
  const std::size_t constants_begin = kPointerBytes * bindings;
  const std::size_t total = constants_begin + contract.constants.size();
  std::size_t end = 0;
  for (std::size_t i = 0; i < kMaxParameters; ++i) {
    std::size_t offset = 0;
    std::size_t size = 0;
    const CUresult result = syms.cuFuncGetParamInfo(function, i, &offset, &size);
    if (result == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (result != CUDA_SUCCESS)
      return cuda_status(&syms, result, "cuFuncGetParamInfo", what + " parameter " + std::to_string(i));
    const std::string param = what + " parameter " + std::to_string(i) + " (offset " + std::to_string(offset) +
                              ", " + std::to_string(size) + " bytes)";
    if (i < bindings) {
      if (offset != kPointerBytes * i || size != kPointerBytes)
        return invalid_error(param + ": the contract's binding " + std::to_string(i) + " needs an 8-byte pointer at offset " +
                             std::to_string(kPointerBytes * i));
    } else if (offset < constants_begin || offset + size > total) {
      return invalid_error(param + " lies outside the contract's " + std::to_string(contract.constants.size()) +
                           " constant bytes after " + std::to_string(bindings) + " bindings (bytes " +
                           std::to_string(constants_begin) + " to " + std::to_string(total) + ")");
    }
    offsets.push_back(offset);
    end = std::max(end, offset + size);
  }
  if (offsets.size() < bindings)
    return invalid_error(what + " takes " + std::to_string(offsets.size()) + " parameters; the contract declares " +
                         std::to_string(bindings) + " bindings (parameter " + std::to_string(offsets.size()) +
                         " is missing)");
  if (end != total)
    return invalid_error(what + "'s parameters end at byte " + std::to_string(end) + "; the contract's " +
                         std::to_string(bindings) + " bindings and " + std::to_string(contract.constants.size()) +
                         " constant bytes end at byte " + std::to_string(total) +
                         (offsets.size() == bindings ? " (the kernel takes no constant parameter)" : ""));
  return Status();
}

// The fixed launch shape must fit the compiled kernel; refused here rather than as an
// opaque failure when a region is lowered.
Status check_shape(const std::string& what, const CudaSymbols& syms, CUfunction function, const CodeImage& image) {
  int max_threads = 0;
  int max_shared = 0;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
                            "asking the block size limit of " + what);
  ACCORD_CU_RETURN_IF_ERROR(
      syms, cuFuncGetAttribute(&max_shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function),
      "asking the shared memory limit of " + what);
  const std::uint64_t threads = std::uint64_t{image.block[0]} * image.block[1] * image.block[2];
  if (threads > static_cast<std::uint64_t>(max_threads))
    return invalid_error(what + ": a block of " + std::to_string(threads) + " threads exceeds the kernel's limit of " +
                         std::to_string(max_threads));
  if (image.shared_bytes > static_cast<std::uint64_t>(max_shared))
    return invalid_error(what + ": " + std::to_string(image.shared_bytes) +
                         " bytes of dynamic shared memory exceed the kernel's limit of " + std::to_string(max_shared));
  return Status();
}

}  // namespace

Result<std::unique_ptr<CudaCode>> CudaCode::load(const CudaContext& context, SmVersion device_sm,
                                                 const CodeImage& image, const KernelContract& contract,
                                                 bool other_contexts) {
  const CudaSymbols& syms = *context.syms;
  const std::string what = "kernel '" + image.name + "' on gpu:" + std::to_string(context.ordinal);
  if (!image.is_gpu_image())
    return unsupported_error(what + ": the cuda backend loads GPU images only (PTX, cubin or fatbin bytes); it has "
                                    "no built-in or plugin kernels");
  if (Status valid = contract.validate(); !valid.ok()) return std::move(valid).annotate(what);
  for (std::size_t d = 0; d < 3; ++d)
    if (image.grid[d] == 0 || image.block[d] == 0)
      return invalid_error(what + ": grid and block dimensions must be at least 1");

  const CudaImageFormat format = classify_image(image.image);
  ACCORD_RETURN_IF_ERROR(check_target(what, format, image.image, device_sm));

  auto code = std::unique_ptr<CudaCode>(new CudaCode());
  code->name_ = image.name;
  code->contract_ = contract;
  code->grid_ = image.grid;
  code->block_ = image.block;
  code->shared_bytes_ = image.shared_bytes;

  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "loading " + what);
  // PTX must end in a NUL; the bytes are copied so the caller's need not.
  std::vector<std::byte> bytes(image.image);
  if (format == CudaImageFormat::Ptx && bytes.back() != std::byte{0}) bytes.push_back(std::byte{0});
  std::string log(kJitLogBytes, '\0');
  std::array<CUjit_option, 2> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  std::array<void*, 2> values{log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
  CUmodule module = nullptr;
  const CUresult loaded = syms.cuModuleLoadDataEx(&module, bytes.data(), static_cast<unsigned>(options.size()),
                                                  options.data(), values.data());
  if (loaded != CUDA_SUCCESS) {
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    std::string context_text = "loading " + what + " on a " + sm_name(device_sm) + " device";
    if (!log.empty()) context_text += ": JIT log: " + log;
    return cuda_status(&syms, loaded, "cuModuleLoadDataEx", context_text);
  }
  code->module_ = UniqueCuModule(syms, context.context, module);
  code->home_ = context.context;

  const CUresult found = syms.cuModuleGetFunction(&code->function_, module, image.name.c_str());
  if (found == CUDA_ERROR_NOT_FOUND)
    return unsupported_error(what + ": the image has no kernel of that name (an extern \"C\" __global__ entry point)");
  if (found != CUDA_SUCCESS) return cuda_status(&syms, found, "cuModuleGetFunction", "finding " + what);

  ACCORD_RETURN_IF_ERROR(check_layout(what, syms, code->function_, contract, code->parameter_offsets_));
  ACCORD_RETURN_IF_ERROR(check_shape(what, syms, code->function_, image));
  if (other_contexts) code->image_ = std::move(bytes);
  return code;
}

Result<CUfunction> CudaCode::function_in(const CudaContext& context) const {
  if (context.context == home_) return function_;
  const std::lock_guard lock(elsewhere_mu_);
  for (const Elsewhere& e : elsewhere_)
    if (e.context == context.context) return e.function;
  const std::string what = "kernel '" + name_ + "' in another context of gpu:" + std::to_string(context.ordinal);
  if (image_.empty()) return unsupported_error(what + ": its image was not kept for other contexts");
  const CudaSymbols& syms = *context.syms;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuCtxSetCurrent(context.context), "loading " + what);
  CUmodule module = nullptr;
  ACCORD_CU_RETURN_IF_ERROR(syms, cuModuleLoadDataEx(&module, image_.data(), 0, nullptr, nullptr), "loading " + what);
  Elsewhere loaded;
  loaded.context = context.context;
  loaded.module = UniqueCuModule(syms, context.context, module);
  ACCORD_CU_RETURN_IF_ERROR(syms, cuModuleGetFunction(&loaded.function, module, name_.c_str()), "finding " + what);
  elsewhere_.push_back(std::move(loaded));
  return elsewhere_.back().function;
}

}  // namespace accord::devices::cuda
