// Addresses as the flags write them: "HOST:PORT" or "[IPv6]:PORT", resolved
// to a sockaddr, and back to text for the lines the server prints.
#pragma once

#include <sys/socket.h>

#include <string>

namespace hello {

// "HOST:PORT" or "[IPv6]:PORT" into a host and a port; false if malformed.
bool split_host_port(const std::string& text, std::string& host, int& port);

// Resolves a numeric address or a host name such as "localhost"; false if
// it resolves to nothing.
bool resolve(const std::string& host, int port, struct sockaddr_storage* out);

// "127.0.0.1:PORT" or "[::1]:PORT".
std::string address_text(const struct sockaddr* sa, int port);

}  // namespace hello
