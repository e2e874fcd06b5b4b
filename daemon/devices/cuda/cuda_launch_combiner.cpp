// CudaLaunchCombiner: see cuda_launch_combiner.h. Why combine and not lock: on the H200,
// one thread keeping sixteen tenants' graphs in flight launched 389,000-420,000 graphs/s,
// sixteen threads launching their own 357,000-381,000, and sixteen threads taking turns
// under a lock 262,000 (tests/bench/RESULTS.md, sessions 21 and 22): the launch path is
// fastest hot on one core; a lock moves it between cores with every launch, and a thread
// of its own (session 24) was a seventeenth busy thread on sixteen CPUs.
#include "daemon/devices/cuda/cuda_launch_combiner.h"

#include <sched.h>

#include <map>
#include <mutex>

namespace accord::devices::cuda {

namespace {

void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::mutex g_combiners_mu;
std::map<const void*, std::weak_ptr<CudaLaunchCombiner>>& combiners() {
  static auto* all = new std::map<const void*, std::weak_ptr<CudaLaunchCombiner>>();  // devices may outlive statics
  return *all;
}

}  // namespace

std::shared_ptr<CudaLaunchCombiner> CudaLaunchCombiner::for_key(const void* key, CudaLaunchStay stay) {
  const std::lock_guard lock(g_combiners_mu);
  std::weak_ptr<CudaLaunchCombiner>& entry = combiners()[key];
  if (std::shared_ptr<CudaLaunchCombiner> live = entry.lock()) return live;
  auto made = std::make_shared<CudaLaunchCombiner>(stay);
  entry = made;
  return made;
}

void CudaLaunchCombiner::launch(Request& request) noexcept {
  request.done.store(false, std::memory_order_relaxed);
  Request* head = pushed_.load(std::memory_order_relaxed);
  do {
    request.next = head;
  } while (!pushed_.compare_exchange_weak(head, &request, std::memory_order_release, std::memory_order_relaxed));
  // Wait for a combiner to make it, or become the combiner. A caller whose request is
  // queued never leaves before it is made, so nothing queued is ever stranded.
  for (std::uint32_t spins = 0; !request.done.load(std::memory_order_acquire); ++spins) {
    if (!held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire)) {
      combine(request);
      held_.store(false, std::memory_order_release);
      continue;
    }
    // The combiner may have been preempted: after a while, let it have a core back.
    if ((spins & 1023u) == 1023u)
      sched_yield();
    else
      relax();
  }
}

void CudaLaunchCombiner::combine(Request& mine) noexcept {
  std::uint64_t others = drain(mine);
  if (others == 0) return;  // uncontended: stay no longer
  const std::int64_t start = now_ns();
  std::int64_t last_work = start;
  for (;;) {
    if (pushed_.load(std::memory_order_relaxed) != nullptr) {
      others += drain(mine);
      last_work = now_ns();
      continue;
    }
    const std::int64_t now = now_ns();
    if (now - last_work >= stay_.idle.count() || now - start >= stay_.most.count()) break;
    relax();
  }
  combined_.fetch_add(others, std::memory_order_relaxed);
}

std::uint64_t CudaLaunchCombiner::drain(const Request& mine) noexcept {
  Request* newest = pushed_.exchange(nullptr, std::memory_order_acquire);
  // Oldest first: reverse the stack.
  Request* oldest = nullptr;
  while (newest != nullptr) {
    Request* next = newest->next;
    newest->next = oldest;
    oldest = newest;
    newest = next;
  }
  std::uint64_t others = 0;
  while (oldest != nullptr) {
    Request* const request = oldest;
    oldest = request->next;  // read before done: its caller may then return and reuse it
    request->run(request->context);
    if (request != &mine) ++others;
    request->done.store(true, std::memory_order_release);
  }
  return others;
}

}  // namespace accord::devices::cuda
