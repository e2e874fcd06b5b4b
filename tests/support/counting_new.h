// Replaces the global allocation functions of a test binary with malloc/free-based
// versions that count, per thread, while asked to. Include it in exactly one source
// file of an executable. Every form (plain, array, nothrow) is replaced in matching
// pairs so the sanitizers' new/delete mismatch checks stay quiet.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace accord::testing {
namespace counting_new_detail {
inline thread_local bool counting = false;
inline thread_local std::size_t allocations = 0;

inline void* counted_malloc(std::size_t size) noexcept {
  if (counting) ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace counting_new_detail

// Heap allocations `fn` makes on the calling thread.
template <class Fn>
std::size_t allocations_during(Fn&& fn) {
  counting_new_detail::allocations = 0;
  counting_new_detail::counting = true;
  fn();
  counting_new_detail::counting = false;
  return counting_new_detail::allocations;
}

}  // namespace accord::testing

void* operator new(std::size_t size) {
  if (void* p = accord::testing::counting_new_detail::counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return accord::testing::counting_new_detail::counted_malloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return accord::testing::counting_new_detail::counted_malloc(size);
}
// g++ 12 cannot see that the replaced operator new allocates with malloc and warns on
// these frees (a false positive: every new form above calls malloc).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
