// fake_gpu_executor: the GPU executor with the fake GPU backend (fake_gpu_device.h) in
// its catalog, for the executor tests. `--fake-mode MODE` (before the executor flags)
// makes it misbehave at start: "silent" never says hello, "garbage" answers its channel
// with bytes that are no message, "exit" exits 7 at once.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/api/unique_fd.h"
#include "daemon/executor/gpu_executor.h"
#include "tests/unit/executor/fake_gpu_device.h"

int main(int argc, char** argv) {
  std::string mode;
  std::vector<const char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fake-mode") == 0 && i + 1 < argc) {
      mode = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  auto parsed = accord::executor::parse_executor_args(static_cast<int>(args.size()), args.data());
  if (!parsed.ok() || !parsed->has_value()) {
    std::fprintf(stderr, "fake_gpu_executor: %s\n",
                 parsed.ok() ? "not started as an executor" : std::string(parsed.status().message()).c_str());
    return 2;
  }
  accord::executor::ExecutorArgs executor = std::move(**parsed);
  if (mode == "exit") return 7;
  if (mode == "silent") {
    // Holds the socket open and says nothing until accordd gives up and kills it.
    for (;;) ::pause();
  }
  if (mode == "garbage") {
    const char junk[] = "this is not an executor message";
    static_cast<void>(::write(executor.fd, junk, sizeof(junk)));
    for (;;) ::pause();
  }
  accord::devices::BackendCatalog catalog;
  accord::testing::register_fake(catalog);
  return accord::executor::run_gpu_executor(catalog, std::move(executor));
}
