// name_this_thread (client/api/thread_name.h): the kernel shows the name, cut to 15 bytes,
// for the calling thread only.
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "client/api/thread_name.h"

namespace accord {
namespace {

std::string comm_of(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

TEST_CASE("a thread's name is what the kernel shows for it, cut to 15 bytes", "[thread-name]") {
  const long main_tid = syscall(SYS_gettid);
  const std::string main_before = comm_of(main_tid);
  std::string short_name;
  std::string long_name;
  std::thread worker([&] {
    const long tid = syscall(SYS_gettid);
    name_this_thread("accord-ring");
    short_name = comm_of(tid);
    name_this_thread("engine-worker-with-a-long-name");
    long_name = comm_of(tid);
  });
  worker.join();
  CHECK(short_name == "accord-ring");
  CHECK(long_name == "engine-worker-w");
  CHECK(comm_of(main_tid) == main_before);  // only the caller was named
}

}  // namespace
}  // namespace accord
