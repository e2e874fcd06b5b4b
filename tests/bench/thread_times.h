// Per-thread CPU time and scheduling counts of this process, read from
// /proc/self/task/*/schedstat (ns on the CPU, ns waiting on a run queue, times scheduled in),
// so a benchmark can say which of its threads, and the threads of the libraries it runs
// (engine workers, device threads, a driver's queue threads), spent its time and woke how
// often. Threads have no names here, so a ThreadCensus labels them by the setup step that
// created them. Owner thread only.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace accord::bench {

struct ThreadSample {
  double run_ns = 0;   // on a CPU
  double wait_ns = 0;  // runnable, waiting for a CPU
  double slices = 0;   // times scheduled in: about one per wake-up for a thread that sleeps
};

inline std::map<pid_t, ThreadSample> read_thread_samples() {
  std::map<pid_t, ThreadSample> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (const dirent* entry = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid <= 0) continue;
    const std::string path = std::string("/proc/self/task/") + entry->d_name + "/schedstat";
    if (std::FILE* f = std::fopen(path.c_str(), "r")) {
      ThreadSample s;
      if (std::fscanf(f, "%lf %lf %lf", &s.run_ns, &s.wait_ns, &s.slices) == 3) threads[tid] = s;
      std::fclose(f);
    }
  }
  closedir(dir);
  return threads;
}

// Labels threads by when they appeared, and sums their samples over measured intervals.
class ThreadCensus {
 public:
  // Labels every thread not labelled yet "<label>" (one new thread) or "<label>#i" (several,
  // in order of thread id, which is creation order here).
  void label_new(const std::string& label) {
    std::vector<pid_t> fresh;
    for (const auto& [tid, sample] : read_thread_samples())
      if (!labels_.count(tid)) fresh.push_back(tid);
    for (std::size_t i = 0; i < fresh.size(); ++i)
      labels_[fresh[i]] = fresh.size() == 1 ? label : label + "#" + std::to_string(i + 1);
  }
  const std::string& label_of(pid_t tid) {
    auto it = labels_.find(tid);
    if (it == labels_.end()) it = labels_.emplace(tid, "thread " + std::to_string(tid)).first;
    return it->second;
  }

 private:
  std::map<pid_t, std::string> labels_;
};

// Per-thread totals over the intervals between begin() and end() calls.
class ThreadAccount {
 public:
  void begin() { start_ = read_thread_samples(); }
  void end() {
    for (const auto& [tid, now] : read_thread_samples()) {
      const auto before = start_.find(tid);
      const ThreadSample base = before == start_.end() ? ThreadSample{} : before->second;
      ThreadSample& total = totals_[tid];
      total.run_ns += now.run_ns - base.run_ns;
      total.wait_ns += now.wait_ns - base.wait_ns;
      total.slices += now.slices - base.slices;
    }
  }
  const std::map<pid_t, ThreadSample>& totals() const { return totals_; }

 private:
  std::map<pid_t, ThreadSample> start_;
  std::map<pid_t, ThreadSample> totals_;
};

}  // namespace accord::bench
