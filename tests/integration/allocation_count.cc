// Counts heap allocations: malloc and operator new are replaced in the
// allocation_tests binary only (it is not built with sanitizers, which
// replace them too); allocation_count.h says what counts and when.
#include "allocation_count.h"

#include <cerrno>
#include <cstdlib>
#include <new>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace hello {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

}  // namespace hello

namespace {

void note() {
  if (hello::counting.load(std::memory_order_relaxed)) hello::allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  note();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void free(void* p) {
  __libc_free(p);
}
// simdjson's buffers are aligned; aligned operator new comes here too.
int posix_memalign(void** p, size_t align, size_t n) {
  note();
  *p = __libc_memalign(align, n);
  return *p != nullptr || n == 0 ? 0 : ENOMEM;
}
void* aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
}

void* operator new(size_t n) {
  note();
  if (void* p = __libc_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  __libc_free(p);
}
void operator delete[](void* p) noexcept {
  __libc_free(p);
}
void operator delete(void* p, size_t) noexcept {
  __libc_free(p);
}
void operator delete[](void* p, size_t) noexcept {
  __libc_free(p);
}
