// Move-only owners of every CUDA driver handle the backend creates (STYLE.md rule 7,
// after client/api/unique_fd.h): no cu*Destroy / cuMemRelease / cuMemUnmap outside this
// file. Each owner remembers the symbol table and the context it was made in, and makes
// that context current before destroying, because a module or mapping is released in
// its own context and destruction may run on any engine thread. Failures while
// destroying are ignored: nothing can be recovered there, and after a sticky fault every
// call fails. Not thread-safe: one owner, one thread at a time.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <utility>

#include "daemon/devices/cuda/cuda_symbols.h"

namespace accord::devices::cuda {

// An owned handle of kind `Traits` (see the traits below).
template <class Traits>
class UniqueCu {
 public:
  using Handle = typename Traits::Handle;

  UniqueCu() noexcept = default;
  // Takes ownership of `handle`, made in `context` (may be null: no context needed).
  UniqueCu(const CudaSymbols& syms, CUcontext context, Handle handle) noexcept
      : syms_(&syms), context_(context), handle_(handle) {}
  ~UniqueCu() { reset(); }

  UniqueCu(const UniqueCu&) = delete;
  UniqueCu& operator=(const UniqueCu&) = delete;
  UniqueCu(UniqueCu&& other) noexcept
      : syms_(other.syms_), context_(other.context_), handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueCu& operator=(UniqueCu&& other) noexcept {
    if (this != &other) {
      reset();
      syms_ = other.syms_;
      context_ = other.context_;
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }

  // Destroys the owned handle, if any.
  void reset() noexcept {
    if (handle_ == Handle{} || syms_ == nullptr) return;
    if (context_ != nullptr) static_cast<void>(syms_->cuCtxSetCurrent(context_));
    Traits::destroy(*syms_, std::exchange(handle_, Handle{}));
  }

 private:
  const CudaSymbols* syms_ = nullptr;
  CUcontext context_ = nullptr;
  Handle handle_{};
};

struct CuStreamTraits {
  using Handle = CUstream;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuStreamDestroy(h)); }
};
struct CuEventTraits {
  using Handle = CUevent;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuEventDestroy(h)); }
};
struct CuModuleTraits {
  using Handle = CUmodule;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuModuleUnload(h)); }
};
struct CuGraphTraits {
  using Handle = CUgraph;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuGraphDestroy(h)); }
};
struct CuGraphExecTraits {
  using Handle = CUgraphExec;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuGraphExecDestroy(h)); }
};
// A physical allocation from cuMemCreate (0 is never a valid handle).
struct CuMemHandleTraits {
  using Handle = CUmemGenericAllocationHandle;
  static void destroy(const CudaSymbols& s, Handle h) noexcept { static_cast<void>(s.cuMemRelease(h)); }
};

// Pinned, device-mapped host memory from cuMemHostAlloc (the completion flags).
struct CuHostAllocTraits {
  using Handle = void*;
  static void destroy(const CudaSymbols& s, Handle h) noexcept {
    if (s.cuMemFreeHost != nullptr) static_cast<void>(s.cuMemFreeHost(h));
  }
};

using UniqueCuStream = UniqueCu<CuStreamTraits>;
using UniqueCuEvent = UniqueCu<CuEventTraits>;
using UniqueCuModule = UniqueCu<CuModuleTraits>;
using UniqueCuGraph = UniqueCu<CuGraphTraits>;
using UniqueCuGraphExec = UniqueCu<CuGraphExecTraits>;
using UniqueCuMemHandle = UniqueCu<CuMemHandleTraits>;
using UniqueCuHostAlloc = UniqueCu<CuHostAllocTraits>;

// An owned virtual address range (cuMemAddressReserve), or a mapping of physical memory
// into one (cuMemMap): both are released by pointer and size.
template <bool kMapping>
class UniqueCuRange {
 public:
  UniqueCuRange() noexcept = default;
  UniqueCuRange(const CudaSymbols& syms, CUcontext context, CUdeviceptr ptr, std::size_t bytes) noexcept
      : syms_(&syms), context_(context), ptr_(ptr), bytes_(bytes) {}
  ~UniqueCuRange() { reset(); }
  UniqueCuRange(const UniqueCuRange&) = delete;
  UniqueCuRange& operator=(const UniqueCuRange&) = delete;
  UniqueCuRange(UniqueCuRange&& other) noexcept
      : syms_(other.syms_), context_(other.context_), ptr_(std::exchange(other.ptr_, 0)), bytes_(other.bytes_) {}
  UniqueCuRange& operator=(UniqueCuRange&& other) noexcept {
    if (this != &other) {
      reset();
      syms_ = other.syms_;
      context_ = other.context_;
      ptr_ = std::exchange(other.ptr_, 0);
      bytes_ = other.bytes_;
    }
    return *this;
  }

  CUdeviceptr get() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

  void reset() noexcept {
    if (ptr_ == 0 || syms_ == nullptr) return;
    if (context_ != nullptr) static_cast<void>(syms_->cuCtxSetCurrent(context_));
    const CUdeviceptr ptr = std::exchange(ptr_, 0);
    if constexpr (kMapping)
      static_cast<void>(syms_->cuMemUnmap(ptr, bytes_));
    else
      static_cast<void>(syms_->cuMemAddressFree(ptr, bytes_));
  }

 private:
  const CudaSymbols* syms_ = nullptr;
  CUcontext context_ = nullptr;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

using UniqueCuAddressRange = UniqueCuRange<false>;
using UniqueCuMapping = UniqueCuRange<true>;

// Host pages registered with cuMemHostRegister; unregistered on destruction.
class UniqueCuHostRegistration {
 public:
  UniqueCuHostRegistration() noexcept = default;
  UniqueCuHostRegistration(const CudaSymbols& syms, CUcontext context, void* pages) noexcept
      : syms_(&syms), context_(context), pages_(pages) {}
  ~UniqueCuHostRegistration() { reset(); }
  UniqueCuHostRegistration(const UniqueCuHostRegistration&) = delete;
  UniqueCuHostRegistration& operator=(const UniqueCuHostRegistration&) = delete;
  UniqueCuHostRegistration(UniqueCuHostRegistration&& other) noexcept
      : syms_(other.syms_), context_(other.context_), pages_(std::exchange(other.pages_, nullptr)) {}
  UniqueCuHostRegistration& operator=(UniqueCuHostRegistration&& other) noexcept {
    if (this != &other) {
      reset();
      syms_ = other.syms_;
      context_ = other.context_;
      pages_ = std::exchange(other.pages_, nullptr);
    }
    return *this;
  }

  void reset() noexcept {
    if (pages_ == nullptr || syms_ == nullptr) return;
    if (context_ != nullptr) static_cast<void>(syms_->cuCtxSetCurrent(context_));
    static_cast<void>(syms_->cuMemHostUnregister(std::exchange(pages_, nullptr)));
  }
  // Unregisters through another GPU's driver table and context: a registration shared by
  // several GPUs is undone by whichever lets go last (CudaHostRegistry).
  void reset(const CudaSymbols& syms, CUcontext context) noexcept {
    syms_ = &syms;
    context_ = context;
    reset();
  }

 private:
  const CudaSymbols* syms_ = nullptr;
  CUcontext context_ = nullptr;
  void* pages_ = nullptr;
};

// The context a CudaDevice works in, released on destruction: either the GPU's retained
// primary context (cuDevicePrimaryCtxRetain; released, so that it lives while other code
// of the process retains it) or one made for this device alone (cuCtxCreate; destroyed).
// Every thread that calls into the device makes it current first
// (CudaContext::make_current).
class UniqueCuContext {
 public:
  UniqueCuContext() noexcept = default;
  static UniqueCuContext primary(const CudaSymbols& syms, CUdevice device, CUcontext context) noexcept {
    return UniqueCuContext(syms, device, context, false);
  }
  static UniqueCuContext created(const CudaSymbols& syms, CUdevice device, CUcontext context) noexcept {
    return UniqueCuContext(syms, device, context, true);
  }
  ~UniqueCuContext() { reset(); }
  UniqueCuContext(const UniqueCuContext&) = delete;
  UniqueCuContext& operator=(const UniqueCuContext&) = delete;
  UniqueCuContext(UniqueCuContext&& other) noexcept
      : syms_(other.syms_), device_(other.device_), context_(std::exchange(other.context_, nullptr)),
        created_(other.created_) {}
  UniqueCuContext& operator=(UniqueCuContext&& other) noexcept {
    if (this != &other) {
      reset();
      syms_ = other.syms_;
      device_ = other.device_;
      context_ = std::exchange(other.context_, nullptr);
      created_ = other.created_;
    }
    return *this;
  }

  CUcontext get() const noexcept { return context_; }
  // Whether the context was made for this owner (cuCtxCreate) rather than the primary one.
  bool created() const noexcept { return created_; }

  void reset() noexcept {
    if (context_ == nullptr || syms_ == nullptr) return;
    CUcontext context = std::exchange(context_, nullptr);
    if (created_)
      static_cast<void>(syms_->cuCtxDestroy(context));
    else
      static_cast<void>(syms_->cuDevicePrimaryCtxRelease(device_));
  }

 private:
  UniqueCuContext(const CudaSymbols& syms, CUdevice device, CUcontext context, bool created) noexcept
      : syms_(&syms), device_(device), context_(context), created_(created) {}

  const CudaSymbols* syms_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool created_ = false;
};

// What every file of the backend needs to call into one GPU: the driver, the device and
// the device's context (the primary one, or its own: cuda.context). A borrowed view: the CudaDevice owns the context. Thread-safe.
struct CudaContext {
  const CudaSymbols* syms = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int ordinal = 0;

  // Makes the device's context current on the calling thread. Called at the top of every
  // entry point: the engine calls a device from many threads, and a thread's current
  // context may have been changed by other CUDA code in the process (the embedded
  // runtime shares its process). cuCtxSetCurrent is a thread-local store in the driver.
  CUresult make_current() const noexcept { return syms->cuCtxSetCurrent(context); }
};

}  // namespace accord::devices::cuda
