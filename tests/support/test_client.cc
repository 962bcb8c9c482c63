#include "test_client.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace hello::test {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `fd` to become readable before `deadline`.
bool wait_readable(int fd, Clock::time_point deadline) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, remaining_ms(deadline)) > 0;
}

// Waits for a child until `deadline`; returns its exit code, or -1.
int wait_child(pid_t pid, Clock::time_point deadline) {
  while (true) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (Clock::now() >= deadline) return -1;
    usleep(5000);
  }
}

// With `search_path`, a binary without a slash is looked up on PATH
// (posix_spawnp), as a wrapper's first word such as `podman` is.
pid_t spawn(const std::string& binary, const std::vector<std::string>& args, int* out_fd,
            int* err_fd, bool search_path = false) {
  int err_pipe[2], out_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int rc = search_path ? posix_spawnp(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ)
                       : posix_spawn(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(err_pipe[1]);
  close(out_pipe[1]);
  if (rc != 0) throw std::runtime_error("cannot spawn " + binary);
  *out_fd = out_pipe[0];
  *err_fd = err_pipe[0];
  return pid;
}

// HELLO_TEST_SERVER_WRAP, split on spaces and tabs (no quoting): a command
// prefix that ServerProcess runs instead of the build's binary, such as
// `podman run --rm --network host IMAGE`, followed by `hello-NAME` and
// the flags. Empty when unset: the build's binaries run directly.
std::vector<std::string> server_wrap() {
  std::vector<std::string> words;
  const char* wrap = getenv("HELLO_TEST_SERVER_WRAP");
  std::istringstream in(wrap ? wrap : "");
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

}  // namespace

std::string binary_path(const std::string& persona) {
  return std::string(HELLO_BINARY_DIR) + "/hello-" + persona;
}

std::vector<PersonaInfo> read_personas() {
  std::vector<PersonaInfo> personas;
  std::ifstream f(HELLO_PERSONAS_FILE);
  if (!f) throw std::runtime_error(std::string("cannot read ") + HELLO_PERSONAS_FILE);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    PersonaInfo p;
    fields >> p.name >> p.port >> p.kind >> std::ws;
    std::getline(fields, p.summary);
    if (p.name.empty() || p.port <= 0 || (p.kind != "framework" && p.kind != "calibration") ||
        p.summary.empty())
      throw std::runtime_error(std::string(HELLO_PERSONAS_FILE) +
                               ": not NAME PORT KIND SUMMARY: '" + line + "'");
    personas.push_back(p);
  }
  if (personas.empty()) throw std::runtime_error(std::string(HELLO_PERSONAS_FILE) + ": no persona");
  return personas;
}

long proc_status_kib(pid_t pid, std::string_view field) {
  std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  size_t at = status.find("\n" + std::string(field) + ":");
  if (at == std::string::npos) return -1;
  return std::strtol(status.c_str() + at + field.size() + 2, nullptr, 10);
}

ServerProcess::ServerProcess(const std::string& persona, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"-H", "127.0.0.1"};
  if (std::find(flags.begin(), flags.end(), "-p") == flags.end() && getenv("PORT") == nullptr &&
      getenv("HELLO_PORT") == nullptr)
    args.insert(args.end(), {"-p", "0"});
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<std::string> wrap = server_wrap();
  if (wrap.empty()) {
    pid_ = spawn(binary_path(persona), args, &stdout_fd_, &stderr_fd_);
  } else {
    // The wrapper runs hello-NAME from its own PATH (the image's /usr/bin).
    args.insert(args.begin(), "hello-" + persona);
    args.insert(args.begin(), wrap.begin() + 1, wrap.end());
    pid_ = spawn(wrap[0], args, &stdout_fd_, &stderr_fd_, true);
  }
  // A container takes longer to start than a process: podman sets up its
  // mounts and runtime first (about a second here, more on a loaded machine).
  auto deadline = Clock::now() + (wrap.empty() ? 5s : 30s);
  char c;
  while (wait_readable(stderr_fd_, deadline) && read(stderr_fd_, &c, 1) == 1 && c != '\n')
    banner_ += c;
  // "listening on http://127.0.0.1:PORT (...)", or https://.
  size_t end = banner_.find(' ', banner_.find("://"));
  size_t colon = banner_.rfind(':', end);
  if ((banner_.rfind("listening on http://", 0) != 0 &&
       banner_.rfind("listening on https://", 0) != 0) ||
      colon == std::string::npos)
    throw std::runtime_error("server did not start: " + banner_);
  port_ = std::stoi(banner_.substr(colon + 1));
}

ServerProcess::~ServerProcess() {
  if (stop() == -1) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stderr_fd_ >= 0) close(stderr_fd_);
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

int ServerProcess::stop() {
  if (pid_ < 0) return exit_code_;
  kill(pid_, SIGTERM);
  return wait();
}

void ServerProcess::signal(int sig) {
  if (pid_ >= 0) kill(pid_, sig);
}

int ServerProcess::wait(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return exit_code_;
  int code = wait_child(pid_, Clock::now() + timeout);
  if (code != -1) {
    pid_ = -1;
    exit_code_ = code;
  }
  return code;
}

namespace {

std::string drain(int fd) {
  std::string r;
  auto deadline = Clock::now() + 2s;
  char buf[65536];
  ssize_t n;
  while (wait_readable(fd, deadline) && (n = read(fd, buf, sizeof buf)) > 0)
    r.append(buf, static_cast<size_t>(n));
  return r;
}

}  // namespace

std::string ServerProcess::rest_of_stderr() {
  return drain(stderr_fd_);
}
std::string ServerProcess::all_of_stdout() {
  return drain(stdout_fd_);
}

int ServerProcess::open_fds() const {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

bool ServerProcess::fds_reach(int fds, std::chrono::milliseconds limit) const {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (open_fds() != fds && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  return open_fds() == fds;
}

RunResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout) {
  int out_fd, err_fd;
  pid_t pid = spawn(binary, args, &out_fd, &err_fd);
  RunResult r{-1, {}, {}};
  auto deadline = Clock::now() + timeout;
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0 && poll(fds, 2, remaining_ms(deadline)) > 0) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  r.exit_code = wait_child(pid, deadline);
  if (r.exit_code == -1) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return r;
}

namespace {

// The tests' one client context: TLS 1.2 and 1.3, no verification, and a
// close without close_notify read as an end rather than an error.
SSL_CTX* client_ctx() {
  static SSL_CTX* ctx = [] {
    // OpenSSL writes with write(2): a server that closed must cost a
    // failed send, not the test binary.
    signal(SIGPIPE, SIG_IGN);
    SSL_CTX* c = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
    return c;
  }();
  return ctx;
}

}  // namespace

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa {};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<struct sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

Client::Client(int port, Tls tls) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa {};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0)
    throw std::runtime_error("connect failed");
  if (tls == Tls::off) return;
  // Bounded: a server that stops answering fails the handshake or a read.
  struct timeval tv = {5, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ssl_ = SSL_new(client_ctx());
  SSL_set_fd(ssl_, fd_);
  SSL_set_tlsext_host_name(ssl_, "localhost");
  if (SSL_connect(ssl_) != 1) {
    ERR_clear_error();
    throw std::runtime_error("TLS handshake failed");
  }
}

Client::~Client() {
  SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

bool Client::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n;
    if (ssl_ != nullptr) {
      size_t written = 0;
      n = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &written) == 1
              ? static_cast<ssize_t>(written)
              : -1;
      if (n < 0) ERR_clear_error();
    } else {
      n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One read: bytes (> 0), the end (0), or an error (-1, errno set; a TLS
// error reads as ECONNRESET).
ssize_t Client::receive(char* buf, size_t len) {
  if (ssl_ == nullptr) return recv(fd_, buf, len, 0);
  size_t got = 0;
  if (SSL_read_ex(ssl_, buf, len, &got) == 1) return static_cast<ssize_t>(got);
  int err = SSL_get_error(ssl_, 0);
  ERR_clear_error();
  if (err == SSL_ERROR_ZERO_RETURN) return 0;
  if (err == SSL_ERROR_SYSCALL && errno == 0) return 0;
  if (errno == 0 || err == SSL_ERROR_SSL) errno = ECONNRESET;
  return -1;
}

// Readable before `deadline`: decrypted bytes wait, or the socket has some.
bool Client::readable(Clock::time_point deadline) {
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return wait_readable(fd_, deadline);
}

bool Client::got_close_notify() const {
  return ssl_ != nullptr && (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0;
}

std::string Client::read_exactly(size_t n, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (pending_.size() < n && readable(deadline)) {
    char buf[65536];
    ssize_t got = receive(buf, sizeof buf);
    if (got <= 0) break;
    pending_.append(buf, static_cast<size_t>(got));
  }
  std::string r = pending_.substr(0, n);
  pending_.erase(0, r.size());
  return r;
}

std::optional<std::string> Client::read_to_eof(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string r = std::move(pending_);
  pending_.clear();
  while (readable(deadline)) {
    char buf[65536];
    ssize_t got = receive(buf, sizeof buf);
    if (got == 0) return r;
    if (got < 0) return errno == ECONNRESET ? std::optional<std::string>(r) : std::nullopt;
    r.append(buf, static_cast<size_t>(got));
  }
  pending_ = r;
  return std::nullopt;
}

std::string Client::read_response(bool head_only, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  size_t end;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos && readable(deadline)) {
    char buf[65536];
    ssize_t got = receive(buf, sizeof buf);
    if (got <= 0) break;
    pending_.append(buf, static_cast<size_t>(got));
  }
  if (end == std::string::npos) return read_exactly(pending_.size(), 0ms);
  size_t head = end + 4;
  size_t length = 0;
  std::string lower = pending_.substr(0, head);
  for (char& c : lower) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  if (size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos)
    length = std::stoul(lower.substr(at + 17));
  return read_exactly(head + (head_only ? 0 : length), remaining_ms(deadline) * 1ms);
}

void Client::reset() {
  struct linger l = {1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd_);
  fd_ = -1;
}

void Client::shutdown_write() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);
    ERR_clear_error();
  }
  ::shutdown(fd_, SHUT_WR);
}

std::string mask_date(std::string_view response, std::string* date) {
  std::string r(response);
  size_t at = 0;
  while ((at = r.find("\r\n", at)) != std::string::npos) {
    at += 2;
    if (strncasecmp(r.c_str() + at, "date: ", 6) != 0) continue;
    size_t end = r.find("\r\n", at);
    if (date) *date = r.substr(at + 6, end - at - 6);
    r.replace(at + 6, end - at - 6, "<date>");
    break;
  }
  return r;
}

bool is_current_http_date(const std::string& value, std::chrono::seconds slack) {
  struct tm tm {};
  const char* end = strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0' || value.size() != 29) return false;
  time_t t = timegm(&tm);
  // Round-trip so a wrong weekday or a padding slip also fails.
  struct tm back;
  gmtime_r(&t, &back);
  char again[64];
  strftime(again, sizeof again, "%a, %d %b %Y %H:%M:%S GMT", &back);
  if (value != again) return false;
  return std::llabs(static_cast<long long>(t - time(nullptr))) <= slack.count();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            (name + "-" + std::to_string(getpid()) + "-" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove(p);
  return p.string();
}

}  // namespace hello::test
