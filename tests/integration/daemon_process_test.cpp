// The harness itself, against the real accordd: a daemon that cannot start is reported
// with its exit status and its stderr instead of a readiness timeout.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "tests/integration/process_support.h"

namespace accord::integration {

TEST_CASE("an accordd that cannot start is reported with its stderr", "[integration]") {
  DaemonOptions options;
  options.extra_args = {"--workers", "0"};  // out of range: accordd exits 2 at once
  std::string message;
  try {
    DaemonProcess daemon(options);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("accordd exited before its sockets accepted connections") != std::string::npos);
  CHECK(message.find("exit status 2") != std::string::npos);
  CHECK(message.find("workers") != std::string::npos);  // accordd's own explanation, from its stderr
}

}  // namespace accord::integration
