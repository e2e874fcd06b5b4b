// Per-thread CPU time and scheduling counts of this process, read from
// /proc/self/task/*/schedstat (ns on the CPU, ns waiting on a run queue, times scheduled in),
// so a benchmark can say which of its threads, and the threads of the libraries it runs
// (engine workers, device threads, a driver's queue threads), spent its time and woke how
// often. Threads have no names here, so a ThreadCensus labels them by the setup step that
// created them. ProcessTreeAccount does the same for another process and its children
// (accordd and its GPU executors), whose threads have names. Owner thread only.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace accord::bench {

struct ThreadSample {
  double run_ns = 0;   // on a CPU
  double wait_ns = 0;  // runnable, waiting for a CPU
  double slices = 0;   // times scheduled in: about one per wake-up for a thread that sleeps
};

// Adds what `now` has over `base` (the same thread, read earlier) to `total`.
inline void add_interval(ThreadSample& total, const ThreadSample& now, const ThreadSample& base) {
  total.run_ns += now.run_ns - base.run_ns;
  total.wait_ns += now.wait_ns - base.wait_ns;
  total.slices += now.slices - base.slices;
}

// Calls visit(tid, thread_dir, sample) for every thread of `task_dir` ("/proc/self/task",
// "/proc/PID/task") whose schedstat could be read; thread_dir is "<task_dir>/<tid>".
template <class Visit>
void for_each_task(const std::string& task_dir, Visit visit) {
  DIR* dir = opendir(task_dir.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid <= 0) continue;
    const std::string thread_dir = task_dir + "/" + entry->d_name;
    if (std::FILE* f = std::fopen((thread_dir + "/schedstat").c_str(), "r")) {
      ThreadSample s;
      const bool read = std::fscanf(f, "%lf %lf %lf", &s.run_ns, &s.wait_ns, &s.slices) == 3;
      std::fclose(f);
      if (read) visit(tid, thread_dir, s);
    }
  }
  closedir(dir);
}

inline std::map<pid_t, ThreadSample> read_thread_samples() {
  std::map<pid_t, ThreadSample> threads;
  for_each_task("/proc/self/task", [&](pid_t tid, const std::string&, const ThreadSample& s) { threads[tid] = s; });
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
      add_interval(totals_[tid], now, before == start_.end() ? ThreadSample{} : before->second);
    }
  }
  const std::map<pid_t, ThreadSample>& totals() const { return totals_; }

 private:
  std::map<pid_t, ThreadSample> start_;
  std::map<pid_t, ThreadSample> totals_;
};

// --- another process and its children (accordd and its GPU executors), threads by name ---

inline std::string read_comm(const std::string& path) {
  char text[64] = {};
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    if (std::fgets(text, sizeof(text), f) == nullptr) text[0] = '\0';
    std::fclose(f);
  }
  text[std::strcspn(text, "\n")] = '\0';
  return text;
}

// The processes whose parent is `pid` (from /proc/*/stat).
inline std::vector<pid_t> child_processes(pid_t pid) {
  std::vector<pid_t> children;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return children;
  while (const dirent* entry = readdir(dir)) {
    const pid_t candidate = static_cast<pid_t>(std::atoi(entry->d_name));
    if (candidate <= 0) continue;
    char text[512] = {};
    if (std::FILE* f = std::fopen(("/proc/" + std::string(entry->d_name) + "/stat").c_str(), "r")) {
      if (std::fgets(text, sizeof(text), f) == nullptr) text[0] = '\0';
      std::fclose(f);
    }
    // "PID (comm) STATE PPID ...": the comm may hold spaces, so read after its last ')'.
    const char* close = std::strrchr(text, ')');
    char state = 0;
    int parent = 0;
    if (close != nullptr && std::sscanf(close + 1, " %c %d", &state, &parent) == 2 && parent == pid)
      children.push_back(candidate);
  }
  closedir(dir);
  return children;
}

// Key: "process/thread name", e.g. "accordd/accord-ring"; value: the sum over its threads
// and how many there were.
using NamedSamples = std::map<std::string, std::pair<ThreadSample, int>>;

inline void add_process_threads(pid_t pid, const std::string& process,
                                std::map<pid_t, std::pair<std::string, ThreadSample>>& out) {
  const auto add = [&](pid_t tid, const std::string& thread_dir, const ThreadSample& s) {
    out[tid] = {process + "/" + read_comm(thread_dir + "/comm"), s};
  };
  for_each_task("/proc/" + std::to_string(pid) + "/task", add);
}

// CPU time of a process tree's threads between begin() and end(), summed by thread name:
// which of accordd's or its executors' threads ran, waited for a CPU, and woke how often.
class ProcessTreeAccount {
 public:
  explicit ProcessTreeAccount(pid_t root) : root_(root) {}
  void begin() { start_ = read(); }
  void end() {
    totals_.clear();
    for (const auto& [tid, now] : read()) {
      const auto before = start_.find(tid);
      auto& [total, count] = totals_[now.first];
      add_interval(total, now.second, before == start_.end() ? ThreadSample{} : before->second.second);
      ++count;
    }
  }
  // One row per thread name: threads, CPU ms, run-queue wait ms, times scheduled in.
  void print(const char* indent) const {
    std::printf("%s%-34s %7s %10s %10s %10s\n", indent, "process/thread", "threads", "cpu ms", "wait ms", "slices");
    for (const auto& [name, value] : totals_)
      if (value.first.run_ns > 1e6 || value.first.slices > 100)
        std::printf("%s%-34s %7d %10.1f %10.1f %10.0f\n", indent, name.c_str(), value.second, value.first.run_ns / 1e6,
                    value.first.wait_ns / 1e6, value.first.slices);
  }

 private:
  std::map<pid_t, std::pair<std::string, ThreadSample>> read() const {
    std::map<pid_t, std::pair<std::string, ThreadSample>> threads;
    add_process_threads(root_, "accordd", threads);
    for (pid_t child : child_processes(root_)) add_process_threads(child, "executor " + std::to_string(child), threads);
    return threads;
  }
  pid_t root_;
  std::map<pid_t, std::pair<std::string, ThreadSample>> start_;
  NamedSamples totals_;
};

}  // namespace accord::bench
