// Why /proc/loadavg: its fourth field ("3/412") is the number of runnable threads right
// now, in a file of one short line; /proc/stat has the same count after a line per CPU
// and every interrupt counter. Other processes' threads count too, which is the point:
// a core another program is using is not spare either.
#include "client/api/spare_core_probe.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

namespace accord {

SpareCoreProbe::SpareCoreProbe() : loadavg_(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    cpus_ = static_cast<unsigned>(CPU_COUNT(&set));
}

void SpareCoreProbe::refresh() noexcept {
  if (!loadavg_) return;
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  std::int64_t last = sampled_ns_.load(std::memory_order_relaxed);
  if (now - last < std::chrono::nanoseconds(kSamplePeriod).count()) return;
  if (!sampled_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;  // another thread samples
  char text[128];
  const ssize_t n = ::pread(loadavg_.get(), text, sizeof(text) - 1, 0);
  if (n <= 0) return;
  text[n] = '\0';
  // "0.52 0.58 0.59 3/412 12345": skip three fields, read the number before '/'.
  const char* p = text;
  for (int field = 0; field < 3 && *p != '\0'; ++field) {
    while (*p != '\0' && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  unsigned running = 0;
  bool digits = false;
  for (; *p >= '0' && *p <= '9'; ++p, digits = true) running = running * 10 + static_cast<unsigned>(*p - '0');
  if (!digits || *p != '/') return;
  spare_.store(running <= cpus_, std::memory_order_relaxed);
}

}  // namespace accord
