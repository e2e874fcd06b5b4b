// CudaLauncher: one thread of the process that makes the launches of every CudaDevice of
// one GPU opened with cuda.launcher = thread, in the order they were asked for, so that
// the driver's launch path stays on one core instead of being contended by every tenant's
// thread (README.md, "Launching").
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "accord/status.h"
#include "client/api/doorbell.h"
#include "daemon/devices/cuda/cuda_region.h"

namespace accord::devices::cuda {

// What the launching thread calls for a queued slot (CudaSlot::queued): the launch
// itself. Implemented by CudaDevice.
class CudaLaunchTarget {
 public:
  virtual void launch_queued(CudaSlot& slot) noexcept = 0;

 protected:
  ~CudaLaunchTarget() = default;
};

class CudaLauncher {
 public:
  // How long the thread keeps looking for work after its last launch before it sleeps:
  // longer than a tenant's turn from one graph's end to its next submit, so a looping
  // tenant never pays a wake-up, and short enough that an idle process uses no CPU.
  static constexpr std::chrono::microseconds kSpin{200};

  // The launcher of GPU `ordinal` in this process, started when the first caller asks and
  // stopped when the last holder lets go. Errors: Internal when no thread can be started.
  static Result<std::shared_ptr<CudaLauncher>> for_gpu(int ordinal);
  // Stops and joins the thread. Nothing may be queued (each CudaDevice waits for its own
  // queued launches in shut_down()).
  ~CudaLauncher();
  CudaLauncher(const CudaLauncher&) = delete;
  CudaLauncher& operator=(const CudaLauncher&) = delete;

  // Queues `slot`, whose `queued` fields are set, for slot.queued.target->launch_queued().
  // No allocation, no system call unless the thread sleeps.
  void push(CudaSlot& slot) noexcept;

 private:
  CudaLauncher() = default;
  void run() noexcept;
  void lock() noexcept;
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }
  // Takes everything queued, oldest first (null: nothing).
  CudaSlot* take_all() noexcept;
  bool queue_empty() noexcept;

  std::atomic<bool> locked_{false};  // a spin lock: held for a few stores
  CudaSlot* head_ = nullptr;         // locked_
  CudaSlot* tail_ = nullptr;         // locked_
  Doorbell bell_;  // rung by push() and the destructor; the thread sleeps on it
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace accord::devices::cuda
