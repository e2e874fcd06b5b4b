// Sealed memfd pages; see memfd_pages.h.
#include "daemon/devices/common/memfd_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace accord::devices::common {
namespace {

// Exhaustion of memory or descriptors is the client's budget running out, not a bug:
// Busy, so the caller can free something and retry (ARCHITECTURE.md, limits).
Status system_error(const char* subject, const char* call, int err, std::size_t bytes) {
  const std::string what = std::string(subject) + ": " + call + " for " + std::to_string(bytes) +
                           " bytes: " + std::strerror(err);
  if (err == ENOMEM || err == ENOSPC) return busy_error("out of memory: " + what);
  if (err == EMFILE || err == ENFILE) return busy_error("out of file descriptors: " + what);
  return internal_error(what);
}

}  // namespace

Result<std::unique_ptr<MemfdPages>> MemfdPages::create(std::size_t bytes, const char* what) {
  if (bytes == 0) return invalid_error(std::string(what) + ": cannot allocate 0 bytes");
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX) - page)
    return invalid_error(std::string(what) + ": " + std::to_string(bytes) + " bytes is larger than any mapping");
  const std::size_t mapped = (bytes + page - 1) / page * page;

  UniqueFd fd(::memfd_create("accord-pages", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error(what, "memfd_create", errno, bytes);
  // A new memfd is empty; ftruncate extends it with zero pages, which is how the
  // storage is zero-initialised without touching it.
  if (::ftruncate(fd.get(), static_cast<off_t>(mapped)) != 0) return system_error(what, "ftruncate", errno, bytes);
  void* address = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (address == MAP_FAILED) return system_error(what, "mmap", errno, bytes);
  // Sealed after mapping, so our own mapping is never at risk: no one can truncate the
  // file (SIGBUS in the daemon) or grow it, and no one can lift the seals. Writes stay
  // allowed, since clients write their inputs through their own mapping.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    ::munmap(address, mapped);
    return system_error(what, "fcntl(F_ADD_SEALS)", err, bytes);
  }
  return std::unique_ptr<MemfdPages>(new MemfdPages(std::move(fd), static_cast<std::byte*>(address), bytes, mapped));
}

MemfdPages::~MemfdPages() {
  // munmap only fails for arguments this type never produces.
  static_cast<void>(::munmap(address_, mapped_bytes_));
}

}  // namespace accord::devices::common
