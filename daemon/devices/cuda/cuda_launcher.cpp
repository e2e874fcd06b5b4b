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

#include "client/api/futex.h"
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
  bell_.fetch_add(1, std::memory_order_release);
  futex_wake_all(bell_);
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
  // An RMW, for the order ring_doorbell explains: either it sees the thread counted as a
  // sleeper, or the thread's look at the queue after counting itself sees this slot.
  if (sleepers_.fetch_add(0, std::memory_order_acq_rel) == 0) return;
  bell_.fetch_add(1, std::memory_order_release);
  futex_wake_all(bell_);
}

CudaSlot* CudaLauncher::take_all() noexcept {
  lock();
  CudaSlot* all = head_;
  head_ = tail_ = nullptr;
  unlock();
  return all;
}

void CudaLauncher::run() noexcept {
  name_this_thread("cuda-launch");
  using Clock = std::chrono::steady_clock;
  auto last_launch = Clock::now();
  while (!stop_.load(std::memory_order_acquire)) {
    CudaSlot* slot = take_all();
    if (slot != nullptr) {
      while (slot != nullptr) {
        // Read before the launch: once launched, the slot may be reported, and queued again.
        CudaSlot* next = slot->queued.next;
        slot->queued.target->launch_queued(*slot);
        slot = next;
      }
      last_launch = Clock::now();
      continue;
    }
    if (Clock::now() - last_launch < kSpin) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    const std::uint32_t seen = bell_.load(std::memory_order_acquire);
    sleepers_.fetch_add(1, std::memory_order_acq_rel);  // then look once more: see push()
    lock();
    const bool empty = head_ == nullptr;
    unlock();
    if (empty && !stop_.load(std::memory_order_acquire)) futex_wait(bell_, seen);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    last_launch = Clock::now();  // woken for work: spin again after it
  }
}

}  // namespace accord::devices::cuda
