// The process around the workers: flags, the listening address, signals.
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstring>
#include <string>

#include "persona.h"
#include "worker.h"

#ifndef HELLO_VERSION
#define HELLO_VERSION "0.0.0"
#endif

namespace hello {

namespace {

struct Options {
  std::string host = "0.0.0.0";
  int port = 0;
  TableOptions table;
};

// Usage errors exit 2, like getopt-based tools; startup failures exit 1.
constexpr int kExitUsage = 2;
constexpr int kExitStartup = 1;

std::string address_text(const struct sockaddr* sa, int port) {
  char ip[INET6_ADDRSTRLEN] = "";
  if (sa->sa_family == AF_INET6) {
    uv_ip6_name(reinterpret_cast<const struct sockaddr_in6*>(sa), ip, sizeof ip);
    return fmt::format("[{}]:{}", ip, port);
  }
  uv_ip4_name(reinterpret_cast<const struct sockaddr_in*>(sa), ip, sizeof ip);
  return fmt::format("{}:{}", ip, port);
}

// Resolves a numeric address or a host name such as "localhost".
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

// With SO_REUSEPORT a second server of ours would silently share the port
// with the first. A plain bind first makes "address already in use" an
// error again, as it is for the real frameworks.
int probe_port(const struct sockaddr* addr) {
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return uv_translate_sys_error(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len =
      addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  int rc = bind(fd, addr, len) == 0 ? 0 : uv_translate_sys_error(errno);
  ::close(fd);
  return rc;
}

struct Signals {
  uv_signal_t interrupt;
  uv_signal_t terminate;
  Worker* worker;
};

void on_signal(uv_signal_t* handle, int) {
  Signals* s = static_cast<Signals*>(handle->data);
  uv_close(reinterpret_cast<uv_handle_t*>(&s->interrupt), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&s->terminate), nullptr);
  s->worker->stop();
}

}  // namespace

int run(const Persona& persona, int argc, char** argv) {
  std::string name = fmt::format("hello-{}", persona.name);
  Options opt;
  opt.port = persona.port;

  CLI::App app{fmt::format("{}: {}", name, persona.summary), name};
  app.add_option("-H,--host", opt.host, "Address to listen on")->capture_default_str();
  app.add_option("-p,--port", opt.port, "Port to listen on; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_flag("--json", opt.table.json,
               "Answer / with the persona's JSON body instead of its text");
  app.add_flag("--keep-alive", opt.table.keep_alive,
               "Keep connections alive per HTTP rules even where the framework closes them");
  app.set_version_flag("-V,--version", fmt::format("{} {}", name, HELLO_VERSION));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "{}: {} (usage: {} [OPTIONS], see --help)\n", name, e.what(), name);
    return kExitUsage;
  }

  struct sockaddr_storage addr;
  if (!resolve(opt.host, opt.port, &addr)) {
    fmt::print(stderr, "{}: cannot resolve host '{}' (usage: {} [OPTIONS], see --help)\n", name,
               opt.host, name);
    return kExitUsage;
  }
  const struct sockaddr* sa = reinterpret_cast<const struct sockaddr*>(&addr);

  // A client that resets mid-response must cost us a failed write, not the process.
  signal(SIGPIPE, SIG_IGN);

  Worker worker(persona, opt.table);
  int rc = opt.port != 0 ? probe_port(sa) : 0;
  if (rc == 0) rc = worker.listen(sa);
  if (rc != 0) {
    fmt::print(stderr, "cannot listen on {}: {}\n", address_text(sa, opt.port), uv_strerror(rc));
    return kExitStartup;
  }

  Signals signals;
  signals.worker = &worker;
  for (uv_signal_t* s : {&signals.interrupt, &signals.terminate}) {
    uv_signal_init(worker.loop(), s);
    s->data = &signals;
  }
  uv_signal_start(&signals.interrupt, on_signal, SIGINT);
  uv_signal_start(&signals.terminate, on_signal, SIGTERM);

  fmt::print(stderr, "listening on http://{}\n", address_text(sa, worker.port()));
  fflush(stderr);
  worker.run();
  return 0;
}

}  // namespace hello
