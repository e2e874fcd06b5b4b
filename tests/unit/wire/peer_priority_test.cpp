// peer_runs_ahead (proto/wire/peer_priority.h): true only when the process at the other
// end of a Unix socket has a lower nice value than the caller; false when it cannot tell.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "proto/wire/peer_priority.h"
#include "proto/wire/session_channel.h"
#include "client/api/unique_fd.h"

namespace accord {
namespace {

struct SocketPair {
  UniqueFd ours;
  UniqueFd theirs;
};

SocketPair socket_pair() {
  int fds[2] = {-1, -1};
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Runs `check` in a child whose nice value is raised by `raise` (a process may always
// lower its own priority), and returns the child's exit status: 1 when check() held.
template <typename Check>
int in_child_niced_by(int raise, Check check) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int nice_now = ::getpriority(PRIO_PROCESS, 0);
    if (::setpriority(PRIO_PROCESS, 0, nice_now + raise) != 0) ::_exit(2);
    ::_exit(check() ? 1 : 0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("a peer at the same nice value does not run ahead", "[peer-priority]") {
  SocketPair pair = socket_pair();
  CHECK_FALSE(wire::peer_runs_ahead(pair.ours.get()));
  CHECK_FALSE(wire::peer_runs_ahead(pair.theirs.get()));
}

TEST_CASE("a peer at a lower nice value runs ahead, and not the other way round", "[peer-priority]") {
  // A socket pair's peer credentials name the process that made it: this test.
  SocketPair pair = socket_pair();
  CHECK(in_child_niced_by(5, [&] { return wire::peer_runs_ahead(pair.theirs.get()); }) == 1);

  // A niced child that connects to this process: its end is behind, ours is not ahead.
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));
  REQUIRE(listener.get() >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = "accord-peer-priority-test-" + std::to_string(::getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // abstract: nothing to unlink
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  REQUIRE(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), length) == 0);
  REQUIRE(::listen(listener.get(), 1) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::setpriority(PRIO_PROCESS, 0, ::getpriority(PRIO_PROCESS, 0) + 5) != 0) ::_exit(2);
    UniqueFd end(::socket(AF_UNIX, SOCK_STREAM, 0));
    if (::connect(end.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) ::_exit(3);
    char byte = 0;
    (void)::read(end.get(), &byte, 1);  // alive until the parent has looked, then gone
    ::_exit(0);
  }
  UniqueFd accepted(::accept(listener.get(), nullptr, nullptr));
  REQUIRE(accepted.get() >= 0);
  const Result<wire::PeerCredentials> peer = wire::peer_credentials(accepted.get());
  REQUIRE(peer.ok());
  CHECK(peer.value().pid == child);
  CHECK_FALSE(wire::peer_runs_ahead(accepted.get()));
  accepted.reset();
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a descriptor that is no Unix socket does not run ahead", "[peer-priority]") {
  CHECK_FALSE(wire::peer_runs_ahead(-1));
  int pipe_fds[2] = {-1, -1};
  REQUIRE(::pipe(pipe_fds) == 0);
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  CHECK_FALSE(wire::peer_runs_ahead(read_end.get()));
}

}  // namespace
}  // namespace accord
