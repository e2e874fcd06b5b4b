// Move-only owners of Level Zero handles (STYLE.md rule 7): UniqueZeContext,
// UniqueZeCommandQueue, UniqueZeCommandList, UniqueZeFence, UniqueZeGraph. Each keeps
// the destroy entry point it was created with, so the owner needs no symbol table when
// it dies; the loader must stay loaded meanwhile (it is opened RTLD_NODELETE).
// Not thread-safe; the handles themselves follow Level Zero's rules.
#pragma once

#include <level_zero/ze_api.h>

#include <utility>

#include "accord_ze/ze_graph_ext.h"

namespace accord::devices::level_zero {

template <class Handle>
class UniqueZeHandle {
 public:
  using Destroy = ze_result_t(ZE_APICALL*)(Handle);

  UniqueZeHandle() noexcept = default;
  UniqueZeHandle(Handle handle, Destroy destroy) noexcept : handle_(handle), destroy_(destroy) {}
  ~UniqueZeHandle() { reset(); }
  UniqueZeHandle(const UniqueZeHandle&) = delete;
  UniqueZeHandle& operator=(const UniqueZeHandle&) = delete;
  UniqueZeHandle(UniqueZeHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), destroy_(other.destroy_) {}
  UniqueZeHandle& operator=(UniqueZeHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      destroy_ = other.destroy_;
    }
    return *this;
  }

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Destroys the handle, if any. A failing destroy leaves nothing to recover.
  void reset() noexcept {
    if (Handle h = std::exchange(handle_, nullptr); h != nullptr && destroy_ != nullptr) static_cast<void>(destroy_(h));
  }

 private:
  Handle handle_ = nullptr;
  Destroy destroy_ = nullptr;
};

using UniqueZeContext = UniqueZeHandle<ze_context_handle_t>;
using UniqueZeCommandQueue = UniqueZeHandle<ze_command_queue_handle_t>;
using UniqueZeCommandList = UniqueZeHandle<ze_command_list_handle_t>;
using UniqueZeFence = UniqueZeHandle<ze_fence_handle_t>;
using UniqueZeGraph = UniqueZeHandle<ze_graph_handle_t>;

}  // namespace accord::devices::level_zero
