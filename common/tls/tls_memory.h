// OpenSSL's memory, recycled (docs/tls.md). OpenSSL 3.0 allocates and
// frees a few small blocks for every record it reads or writes (40 and 56
// bytes, inside libssl), and with SSL_MODE_RELEASE_BUFFERS, which keeps an
// idle TLS connection small, a record buffer of about 17 KiB for each read
// and write. Given to OpenSSL through CRYPTO_set_mem_functions, these
// functions keep freed blocks of each size class in a list per thread and
// hand them out again, as the worker's pools do for its own objects: once
// the lists have grown to the peak in use, no record calls malloc.
#pragma once

#include <cstddef>

namespace hello {

// Installs the recycling functions; must run before OpenSSL allocates
// anything (first thing in main). False if it is too late, or in a
// sanitized build, which keeps OpenSSL on plain malloc so that the
// sanitizer sees every block.
bool recycle_tls_memory();

}  // namespace hello
