// The launching thread. Why a thread per GPU and not a lock around the launch: on the
// H200, one thread keeping sixteen tenants' graphs in flight launched 389,000-420,000
// graphs/s, sixteen threads launching their own 357,000-381,000, and sixteen threads
// taking turns under a lock 262,000 (tests/bench/RESULTS.md, sessions 21 and 22): the
// driver's launch path is fastest hot on one core, and a lock only moves it between
// cores with every launch.
#include "daemon/devices/cuda/cuda_launcher.h"

#include <map>
#include <mutex>
#include <system_error>

#include "client/api/thread_name.h"

namespace accord::devices::cuda {

namespace {

std::mutex g_launchers_mu;
std::map<int, std::weak_ptr<CudaLauncher>>& launchers() {
  static auto* all = new std::map<int, std::weak_ptr<CudaLauncher>>();  // never destroyed: devices may outlive statics
  return *all;
}

}  // namespace

Result<std::shared_ptr<CudaLauncher>> CudaLauncher::for_gpu(int ordinal) {
  const std::lock_guard lock(g_launchers_mu);
  std::weak_ptr<CudaLauncher>& entry = launchers()[ordinal];
  if (std::shared_ptr<CudaLauncher> running = entry.lock()) return running;
  std::shared_ptr<CudaLauncher> launcher(new CudaLauncher());
  try {
    launcher->thread_ = std::thread([l = launcher.get()] { l->run(); });
  } catch (const std::system_error& e) {
    return internal_error("cuda: cannot start the launching thread of gpu:" + std::to_string(ordinal) + ": " + e.what());
  }
  entry = launcher;
  return launcher;
}

CudaLauncher::~CudaLauncher() {
  stop_.store(true, std::memory_order_release);
  ring_doorbell(bell_);
  if (thread_.joinable()) thread_.join();
}

void CudaLauncher::lock() noexcept {
  while (locked_.exchange(true, std::memory_order_acquire)) {
    while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
}

void CudaLauncher::push(CudaSlot& slot) noexcept {
  slot.queued.next = nullptr;
  lock();
  (tail_ != nullptr ? tail_->queued.next : head_) = &slot;
  tail_ = &slot;
  unlock();
  ring_doorbell(bell_);
}

CudaSlot* CudaLauncher::take_all() noexcept {
  lock();
  CudaSlot* all = head_;
  head_ = tail_ = nullptr;
  unlock();
  return all;
}

bool CudaLauncher::queue_empty() noexcept {
  lock();
  const bool empty = head_ == nullptr;
  unlock();
  return empty;
}

void CudaLauncher::run() noexcept {
  name_this_thread("cuda-launch");
  for (;;) {
    // Spins for kSpin after the last launch, then sleeps until a push rings.
    wait_doorbell(bell_, kSpin, std::chrono::nanoseconds(-1),
                  [this] { return stop_.load(std::memory_order_acquire) || !queue_empty(); });
    if (stop_.load(std::memory_order_acquire)) return;
    for (CudaSlot* slot = take_all(); slot != nullptr;) {
      // Read before the launch: once launched, the slot may be reported, and queued again.
      CudaSlot* next = slot->queued.next;
      slot->queued.target->launch_queued(*slot);
      slot = next;
    }
  }
}

}  // namespace accord::devices::cuda
