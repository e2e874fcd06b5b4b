// The accordd that a daemon-transport test suite starts in its own process: the Daemon,
// the temporary directory of its sockets, and why it did not start. Shared by the
// conformance and [npu] suites' backends_daemon*.cpp. Not thread-safe: built once, in a
// function-local static.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "accord/status.h"
#include "daemon/service/daemon.h"

struct DaemonUnderTest {
  std::string dir;
  std::unique_ptr<accord::service::Daemon> daemon;
  accord::Status status;

  DaemonUnderTest() = default;
  DaemonUnderTest(DaemonUnderTest&& other) noexcept
      : dir(std::exchange(other.dir, {})), daemon(std::move(other.daemon)), status(std::move(other.status)) {}
  DaemonUnderTest& operator=(DaemonUnderTest&&) = delete;
  // Runs at exit: the daemon stops first, then its socket directory goes, so repeated
  // test runs leave nothing behind in /tmp.
  ~DaemonUnderTest() {
    daemon.reset();
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }

  // Makes /tmp/<prefix>-XXXXXX for the sockets (always /tmp: a socket path must fit
  // sockaddr_un). False, with `status` saying why, when it cannot.
  bool make_socket_dir(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      status = accord::unsupported_error("cannot create a temporary directory for accordd's sockets");
      return false;
    }
    dir = pattern;
    return true;
  }
};
