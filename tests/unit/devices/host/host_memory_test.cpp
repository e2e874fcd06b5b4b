// HostMemory: sealed memfd pages. Covers zero-initialisation, the seals a client meets
// when it maps the exported fd, that a second mapping shares the bytes, and the errors
// of create(). Device-level allocation rules are in host_device_test.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>

#include "daemon/devices/host/host_memory.h"

using accord::ErrorKind;
using accord::devices::host::HostMemory;

TEST_CASE("host memory is zero-initialised and page-rounded", "[devices][host]") {
  auto memory = HostMemory::create(10000);
  REQUIRE(memory.ok());
  HostMemory& m = **memory;
  CHECK(m.bytes() == 10000);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  CHECK(m.mapped_bytes() % page == 0);
  CHECK(m.mapped_bytes() >= m.bytes());
  REQUIRE(m.host_address() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(m.host_address()) % page == 0);
  bool all_zero = true;
  for (std::size_t i = 0; i < m.mapped_bytes(); ++i) all_zero = all_zero && m.host_address()[i] == std::byte{0};
  CHECK(all_zero);
}

TEST_CASE("host memory's exported fd is sealed against shrink, grow and unsealing", "[devices][host]") {
  auto memory = HostMemory::create(4096);
  REQUIRE(memory.ok());
  const int fd = (*memory)->export_fd();
  REQUIRE(fd >= 0);

  errno = 0;
  CHECK(::ftruncate(fd, 0) == -1);
  CHECK(errno == EPERM);
  errno = 0;
  CHECK(::ftruncate(fd, 1 << 20) == -1);
  CHECK(errno == EPERM);

  const int seals = ::fcntl(fd, F_GET_SEALS);
  CHECK((seals & F_SEAL_SHRINK) != 0);
  CHECK((seals & F_SEAL_GROW) != 0);
  CHECK((seals & F_SEAL_SEAL) != 0);
  CHECK((seals & F_SEAL_WRITE) == 0);  // clients write their inputs through the fd
  errno = 0;
  CHECK(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) == -1);
  CHECK(errno == EPERM);

  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("a second mapping of the exported fd shares the bytes both ways", "[devices][host]") {
  auto memory = HostMemory::create(8192);
  REQUIRE(memory.ok());
  HostMemory& m = **memory;
  void* second = ::mmap(nullptr, m.mapped_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, m.export_fd(), 0);
  REQUIRE(second != MAP_FAILED);
  auto* bytes = static_cast<unsigned char*>(second);

  std::memcpy(m.host_address() + 100, "daemon", 6);
  CHECK(std::memcmp(bytes + 100, "daemon", 6) == 0);
  std::memcpy(bytes + 8000, "client", 6);
  CHECK(std::memcmp(m.host_address() + 8000, "client", 6) == 0);

  CHECK(::munmap(second, m.mapped_bytes()) == 0);
}

TEST_CASE("host memory of 0 bytes is Invalid", "[devices][host]") {
  auto memory = HostMemory::create(0);
  REQUIRE_FALSE(memory.ok());
  CHECK(memory.status().kind() == ErrorKind::Invalid);
}

TEST_CASE("host memory larger than any mapping is Invalid, not a crash", "[devices][host]") {
  auto memory = HostMemory::create(static_cast<std::size_t>(-1));
  REQUIRE_FALSE(memory.ok());
  CHECK(memory.status().kind() == ErrorKind::Invalid);
}
