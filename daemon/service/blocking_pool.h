// A few threads for the rare calls that must wait (a blocking host lease), so gRPC's
// callback threads never block (STYLE.md rule 15). Destruction runs what is queued and
// joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace accord::service {

class BlockingPool {
 public:
  explicit BlockingPool(std::size_t threads);
  ~BlockingPool();
  void post(std::function<void()> task);

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace accord::service
