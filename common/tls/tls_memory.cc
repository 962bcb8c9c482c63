#include "tls/tls_memory.h"

#include <openssl/crypto.h>

#include "base/recycled.h"

namespace hello {

namespace {

void* tls_malloc(size_t n, const char*, int) {
  return recycled_malloc(n);
}

void tls_free(void* p, const char*, int) {
  recycled_free(p);
}

void* tls_realloc(void* p, size_t n, const char*, int) {
  return recycled_realloc(p, n);
}

}  // namespace

bool recycle_tls_memory() {
  return kRecycling && CRYPTO_set_mem_functions(tls_malloc, tls_realloc, tls_free) == 1;
}

}  // namespace hello
