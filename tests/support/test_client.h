// Blocking loopback sockets and persona processes for the integration tests.
// Every wait is bounded so a broken server fails a test instead of hanging it.
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hello::test {

using namespace std::chrono_literals;

// A running hello-NAME process, started with -H 127.0.0.1, -p 0 unless the
// flags give a port or the environment does (PORT, HELLO_PORT), and the
// given extra flags; stopped with SIGTERM when destroyed.
// With HELLO_TEST_SERVER_WRAP set (a command prefix, split on spaces, e.g.
// `podman run --rm --network host IMAGE`), it runs `PREFIX hello-NAME FLAGS`
// instead of the build's binary (scripts/image --test, docs/containers.md).
class ServerProcess {
 public:
  ServerProcess(const std::string& persona, const std::vector<std::string>& flags = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The first stderr line ("listening on http://127.0.0.1:PORT").
  const std::string& banner() const { return banner_; }
  // Sends SIGTERM and returns the exit status (or -1 if it did not exit in time).
  int stop();
  // Sends `sig` without waiting.
  void signal(int sig);
  // Waits for the process to exit; returns its status, or -1 at the timeout.
  int wait(std::chrono::milliseconds timeout = 5s);
  // What the process wrote to stderr after the banner, and to stdout; call after it exited.
  std::string rest_of_stderr();
  std::string all_of_stdout();
  // Open descriptors of the process now (from /proc).
  int open_fds() const;
  // Waits until the process has `fds` descriptors open; false at the timeout.
  bool fds_reach(int fds, std::chrono::milliseconds limit) const;

 private:
  pid_t pid_ = -1;
  int port_ = -1;
  int exit_code_ = -1;
  int stderr_fd_ = -1;
  int stdout_fd_ = -1;
  std::string banner_;
};

// The result of running a binary to completion.
struct RunResult {
  int exit_code;    // -1 if it had to be killed
  std::string err;  // everything it wrote to stderr
  std::string out;  // everything it wrote to stdout
};
RunResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = 5s);

// A loopback port free a moment ago (for a server's --admin, which
// ServerProcess does not read back).
int free_port();

// Path of the hello-NAME binary in the build tree.
std::string binary_path(const std::string& persona);

// One line of servers/personas.txt, the list of personas.
struct PersonaInfo {
  std::string name;
  int port = 0;
  std::string kind;  // "framework", or "calibration" for hello-floor
  std::string summary;
};
// Every line of servers/personas.txt, in its order. Throws std::runtime_error
// (a failure of the test that asked) if the file cannot be read, a line is
// not NAME PORT KIND SUMMARY, or it lists no persona: a loop over the
// personas never passes by running zero times.
std::vector<PersonaInfo> read_personas();

// A field of /proc/PID/status in KiB (VmRSS: resident, VmSize: address
// space), or -1 if it cannot be read.
long proc_status_kib(pid_t pid, std::string_view field);

// Plain TCP, or TLS over it (OpenSSL, no certificate check: the servers'
// certificates are made at start).
enum class Tls : uint8_t { off, on };

class Client {
 public:
  explicit Client(int port, Tls tls = Tls::off);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool send(std::string_view bytes);
  // Reads exactly n bytes; returns fewer if the peer closed or time ran out.
  std::string read_exactly(size_t n, std::chrono::milliseconds timeout = 2s);
  // Reads until EOF; nullopt if the connection is still open at the timeout.
  std::optional<std::string> read_to_eof(std::chrono::milliseconds timeout = 2s);
  // Reads one response whose head has Content-Length (and a body unless head_only).
  std::string read_response(bool head_only = false, std::chrono::milliseconds timeout = 2s);
  // Over TLS: close_notify, then the FIN.
  void shutdown_write();
  // Closes with a reset (SO_LINGER 0) instead of a FIN (and no close_notify).
  void reset();
  int fd() const { return fd_; }
  // Over TLS: the session (null before the handshake), and whether the
  // server's close_notify has been read.
  SSL* ssl() const { return ssl_; }
  bool got_close_notify() const;

 private:
  ssize_t receive(char* buf, size_t len);
  bool readable(std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  SSL* ssl_ = nullptr;
  std::string pending_;  // bytes read past the last response
};

// Replaces the value of the Date header (any case) with a fixed marker, and
// reports the value found.
std::string mask_date(std::string_view response, std::string* date = nullptr);
// True if `value` is an IMF-fixdate within `slack` of now.
bool is_current_http_date(const std::string& value, std::chrono::seconds slack = 3s);
// A path under the temporary directory for a file of the running test
// (`name`, the process and the test in its name), removed first.
std::string temp_path(const std::string& name);

// The content of a file, or "" if it cannot be read.
std::string read_file(const std::string& path);

}  // namespace hello::test
