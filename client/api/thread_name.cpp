#include "client/api/thread_name.h"

#include <pthread.h>

#include <cstring>

namespace accord {

void name_this_thread(const char* name) noexcept {
  char cut[16] = {};  // the kernel's limit, the terminating zero included
  std::strncpy(cut, name, sizeof(cut) - 1);
  static_cast<void>(pthread_setname_np(pthread_self(), cut));
}

}  // namespace accord
