// Replaces the global allocation functions of the suite's executables so a test can
// count what one thread allocates (AllocationCounter), to check that a launch allocates
// nothing (device.h: "never allocates"). Every form is malloc/free underneath, so the
// sanitizers still see matched pairs; counting is per thread and off by default.
#include <cstdlib>
#include <new>

#include "tests/conformance/device/device_conformance_helpers.h"

namespace {

thread_local bool t_counting = false;
thread_local std::uint64_t t_allocations = 0;

void* allocate_bytes(std::size_t bytes) {
  if (t_counting) ++t_allocations;
  return std::malloc(bytes == 0 ? 1 : bytes);
}

void* allocate_aligned(std::size_t bytes, std::align_val_t alignment) {
  if (t_counting) ++t_allocations;
  void* p = nullptr;
  const auto align = static_cast<std::size_t>(alignment);
  if (::posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  return p;
}

}  // namespace

namespace accord::devices::conformance {

AllocationCounter::AllocationCounter() noexcept {
  t_allocations = 0;
  t_counting = true;
}
AllocationCounter::~AllocationCounter() { t_counting = false; }
std::uint64_t AllocationCounter::count() const noexcept { return t_allocations; }

}  // namespace accord::devices::conformance

void* operator new(std::size_t bytes) {
  if (void* p = allocate_bytes(bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) {
  if (void* p = allocate_bytes(bytes)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return allocate_bytes(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return allocate_bytes(bytes); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  if (void* p = allocate_aligned(bytes, alignment)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) {
  if (void* p = allocate_aligned(bytes, alignment)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return allocate_aligned(bytes, alignment);
}
void* operator new[](std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return allocate_aligned(bytes, alignment);
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
