#include "daemon/devices/host/host_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace accord::devices::host {
namespace {

// Exhaustion of memory or descriptors is the client's budget running out, not a bug:
// Busy, so the caller can free something and retry (ARCHITECTURE.md, limits).
Status system_error(const char* call, int err, std::size_t bytes) {
  const std::string what = std::string(call) + " for " + std::to_string(bytes) + " bytes: " + std::strerror(err);
  if (err == ENOMEM || err == ENOSPC) return busy_error("out of host memory: " + what);
  if (err == EMFILE || err == ENFILE) return busy_error("out of file descriptors: " + what);
  return internal_error(what);
}

}  // namespace

Result<std::unique_ptr<HostMemory>> HostMemory::create(std::size_t bytes) {
  if (bytes == 0) return invalid_error("host memory: cannot allocate 0 bytes");
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX) - page)
    return invalid_error("host memory: " + std::to_string(bytes) + " bytes is larger than any mapping");
  const std::size_t mapped = (bytes + page - 1) / page * page;

  UniqueFd fd(::memfd_create("accord-host", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create", errno, bytes);
  // A new memfd is empty; ftruncate extends it with zero pages, which is how the
  // storage is zero-initialised without touching it.
  if (::ftruncate(fd.get(), static_cast<off_t>(mapped)) != 0) return system_error("ftruncate", errno, bytes);
  void* address = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (address == MAP_FAILED) return system_error("mmap", errno, bytes);
  // Sealed after mapping, so our own mapping is never at risk: no one can truncate the
  // file (SIGBUS in the daemon) or grow it, and no one can lift the seals. Writes stay
  // allowed, since clients write their inputs through their own mapping.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    ::munmap(address, mapped);
    return system_error("fcntl(F_ADD_SEALS)", err, bytes);
  }
  return std::unique_ptr<HostMemory>(new HostMemory(std::move(fd), static_cast<std::byte*>(address), bytes, mapped));
}

HostMemory::~HostMemory() {
  // munmap only fails for arguments this type never produces.
  static_cast<void>(::munmap(address_, mapped_bytes_));
}

}  // namespace accord::devices::host
