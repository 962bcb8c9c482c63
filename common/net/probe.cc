// A blocking client is enough: the probe is the whole process, asks once
// and exits. Its deadline covers connect, write and the status line.
#include "net/probe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "net/address.h"

namespace hello {

namespace {

using Clock = std::chrono::steady_clock;

int left_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on `fd` until `deadline`; false when it passes.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  struct pollfd p = {fd, events, 0};
  int rc;
  do rc = poll(&p, 1, left_ms(deadline));
  while (rc < 0 && errno == EINTR);
  return rc > 0;
}

// The URL's address and request target, or false with `why`.
bool split_url(const std::string& url, const std::string& admin, std::string& hostport,
               std::string& target, std::string& why) {
  if (url.rfind('/', 0) == 0) {
    if (admin.empty()) {
      why = "a bare path needs the admin address: --admin or HELLO_ADMIN, or give a whole URL";
      return false;
    }
    hostport = admin;
    target = url;
    return true;
  }
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    why = "http://HOST:PORT/PATH or /PATH expected (the admin port speaks plain HTTP)";
    return false;
  }
  size_t slash = url.find('/', scheme.size());
  hostport = url.substr(scheme.size(), slash - scheme.size());
  target = slash == std::string::npos ? "/" : url.substr(slash);
  return true;
}

// Connects to `addr` before `deadline`; the socket, or -1 with `why`.
int connect_to(const struct sockaddr_storage& addr, Clock::time_point deadline, std::string& why) {
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    why = strerror(errno);
    return -1;
  }
  socklen_t len =
      addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  int err = 0;
  if (connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), len) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      socklen_t size = sizeof err;
      err = wait_for(fd, POLLOUT, deadline) ? 0 : ETIMEDOUT;
      if (err == 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size);
    }
  }
  if (err != 0) {
    why = err == ETIMEDOUT ? "no connection in time" : strerror(err);
    close(fd);
    return -1;
  }
  return fd;
}

// Sends the request and reads up to the end of the status line; the line,
// or empty with `why`.
std::string exchange(int fd, const std::string& request, Clock::time_point deadline,
                     std::string& why) {
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EAGAIN && wait_for(fd, POLLOUT, deadline)) {
      continue;
    } else {
      why = n < 0 && errno != EAGAIN ? strerror(errno) : "no answer in time";
      return {};
    }
  }
  std::string in;
  char buf[512];
  while (in.find("\r\n") == std::string::npos && in.size() < 4096) {
    if (!wait_for(fd, POLLIN, deadline)) {
      why = "no answer in time";
      return {};
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      why = n == 0 ? "closed without an answer" : strerror(errno);
      return {};
    }
    in.append(buf, static_cast<size_t>(n));
  }
  size_t end = in.find("\r\n");
  if (end == std::string::npos) {
    why = "no status line";
    return {};
  }
  return in.substr(0, end);
}

}  // namespace

ProbeResult probe(const std::string& url, const std::string& admin, double timeout_s) {
  ProbeResult result;
  std::string hostport, target, host, why;
  int port = 0;
  if (!split_url(url, admin, hostport, target, why)) {
    result.line = fmt::format("{}: {}", url, why);
    return result;
  }
  struct sockaddr_storage addr {};
  if (!split_host_port(hostport, host, port)) {
    result.line = fmt::format("http://{}{}: bad address \"{}\": HOST:PORT expected", hostport,
                              target, hostport);
    return result;
  }
  // Where the server listens on every address, ask it on loopback.
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host != hostport.substr(0, hostport.rfind(':')))
    hostport = host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                                   : fmt::format("{}:{}", host, port);
  std::string shown = fmt::format("http://{}{}", hostport, target);
  if (!resolve(host, port, &addr)) {
    result.line = fmt::format("{}: cannot resolve \"{}\"", shown, host);
    return result;
  }
  auto deadline = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
  int fd = connect_to(addr, deadline, why);
  std::string status;
  if (fd >= 0) {
    status = exchange(fd,
                      fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: hello-probe\r\n"
                                  "Connection: close\r\n\r\n",
                                  target, hostport),
                      deadline, why);
    close(fd);
  }
  // "HTTP/1.1 200 OK": the code is the 3 digits after the first space.
  size_t space = status.find(' ');
  if (status.empty() || status.rfind("HTTP/", 0) != 0 || space == std::string::npos ||
      status.size() < space + 4) {
    result.line = fmt::format("{}: {}", shown, why.empty() ? "not an HTTP answer" : why);
    return result;
  }
  std::string code = status.substr(space + 1);
  result.healthy = code[0] == '2';
  result.line = fmt::format("{}: {}", shown, code);
  return result;
}

}  // namespace hello
