// The port a libuv TCP handle is bound to, IPv4 or IPv6.
#pragma once

#include <uv.h>

namespace hello {

// The bound port of `tcp`, or -1 if it has none.
inline int bound_port(const uv_tcp_t* tcp) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (uv_tcp_getsockname(tcp, reinterpret_cast<struct sockaddr*>(&ss), &len) != 0) return -1;
  if (ss.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<struct sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<struct sockaddr_in*>(&ss)->sin_port);
}

}  // namespace hello
