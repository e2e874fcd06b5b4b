// MemfdPages: device memory that is pages of a sealed memfd mapped into the daemon:
// HostVisible memory of the host device, NpuLocal and Shared memory of an NPU. The memfd
// is what travels to a client over the session channel (SCM_RIGHTS), so the client maps
// the very same pages; the seals stop it from shrinking or growing the file under the
// daemon (ARCHITECTURE.md, security model). Thread-safety: immutable after create().
#pragma once

#include <cstddef>
#include <memory>

#include "client/api/unique_fd.h"
#include "daemon/devices/device.h"

namespace accord::devices::common {

class MemfdPages final : public DeviceMemory {
 public:
  // Creates `bytes` of zero-initialised storage: a memfd (close-on-exec) sized to
  // `bytes` rounded up to the page size, mapped shared and read-write, then sealed
  // against shrink, grow and further sealing. `what` starts error messages ("host
  // memory", "NPU memory"). Thread-safe.
  // Errors: Invalid for 0 bytes or a size no mapping can have; Busy when the kernel
  // is out of memory or descriptors; Internal for any other system failure.
  static Result<std::unique_ptr<MemfdPages>> create(std::size_t bytes, const char* what = "host memory");

  // Unmaps the pages and closes the memfd. A client that mapped the exported fd keeps
  // its own mapping; the pages are freed when the last mapping and fd are gone.
  ~MemfdPages() override;

  MemfdPages(const MemfdPages&) = delete;
  MemfdPages& operator=(const MemfdPages&) = delete;

  // The size requested at create(); the mapping may extend to the next page boundary.
  std::size_t bytes() const noexcept override { return bytes_; }
  // Page-aligned address of the first byte. Never nullptr.
  std::byte* host_address() const noexcept override { return address_; }
  // The sealed memfd. Borrowed: valid while *this lives; dup() it to keep it longer.
  int export_fd() const noexcept override { return fd_.get(); }
  // Bytes actually mapped: bytes() rounded up to the page size.
  std::size_t mapped_bytes() const noexcept { return mapped_bytes_; }

 private:
  MemfdPages(UniqueFd fd, std::byte* address, std::size_t bytes, std::size_t mapped_bytes) noexcept
      : fd_(std::move(fd)), address_(address), bytes_(bytes), mapped_bytes_(mapped_bytes) {}

  UniqueFd fd_;
  std::byte* address_;
  std::size_t bytes_;
  std::size_t mapped_bytes_;
};

}  // namespace accord::devices::common
