#include "net/address.h"

#include <fmt/format.h>
#include <netdb.h>
#include <uv.h>

#include <cstring>

#include "base/check.h"

namespace hello {

bool split_host_port(const std::string& text, std::string& host, int& port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']') return false;
    host = host.substr(1, host.size() - 2);
  }
  std::string digits = text.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  port = std::stoi(digits);
  return port <= 65535;
}

bool resolve(const std::string& host, int port, struct sockaddr_storage* out) {
  struct addrinfo hints {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  struct addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || res == nullptr) return false;
  memcpy(out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

std::string address_text(const struct sockaddr* sa, int port) {
  char ip[INET6_ADDRSTRLEN] = "";
  if (sa->sa_family == AF_INET6) {
    HELLO_CHECK_UV(uv_ip6_name(reinterpret_cast<const struct sockaddr_in6*>(sa), ip, sizeof ip));
    return fmt::format("[{}]:{}", ip, port);
  }
  HELLO_CHECK_UV(uv_ip4_name(reinterpret_cast<const struct sockaddr_in*>(sa), ip, sizeof ip));
  return fmt::format("{}:{}", ip, port);
}

}  // namespace hello
