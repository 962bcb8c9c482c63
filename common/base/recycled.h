// Memory of the libraries a worker drives (OpenSSL, nghttp2), recycled:
// freed blocks of each size class are kept in a list per thread and handed
// out again, as the worker's pools do for its own objects, so that once
// the lists have grown to the peak in use nothing per request calls
// malloc. The blocks stay malloc's own (keyed by malloc_usable_size, no
// header): realloc() and free() take them as they are.
#pragma once

#include <cstddef>

namespace hello {

void* recycled_malloc(size_t n);
void recycled_free(void* p);
void* recycled_realloc(void* p, size_t n);

// False in a sanitized build: there the libraries stay on plain malloc, so
// that the sanitizer sees every block.
constexpr bool kRecycling =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
    false;
#else
    true;
#endif
#else
    true;
#endif

}  // namespace hello
