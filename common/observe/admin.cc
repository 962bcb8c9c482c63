#include "observe/admin.h"

#include <fmt/format.h>
#include <llhttp.h>

#include <string_view>

#include "base/check.h"
#include "http/field_syntax.h"
#include "http/status.h"
#include "net/tcp_port.h"
#include "observe/live_page.h"
#include "observe/metrics_format.h"
#include "observe/page_policy.h"

namespace hello {

namespace {

// The longest target an admin route has, and a little more.
constexpr size_t kMaxTarget = 64;
// An admin request carries no body worth reading.
constexpr uint64_t kMaxBody = 1024;
}  // namespace

// One admin connection: one request, one answer, then close.
struct AdminServer::Exchange {
  AdminServer* server;
  uv_tcp_t tcp;
  uv_timer_t timer;  // the header timeout (slowloris)
  uv_write_t write;
  llhttp_t parser;
  std::string target;
  std::string field;   // the header field name being read
  std::string accept;  // the Accept header fields, joined with ", " (for /metrics)
  bool in_accept = false;
  std::string out;
  size_t head_bytes = 0;
  int status = 0;   // set once the answer is known
  int closing = 0;  // handles still to be closed
  bool answered = false;
  Exchange* prev = nullptr;
  Exchange* next = nullptr;
};

struct AdminCallbacks {
  using Exchange = AdminServer::Exchange;
  static Exchange* of_parser(llhttp_t* p) { return static_cast<Exchange*>(p->data); }

  static int url(llhttp_t* p, const char* at, size_t n) {
    Exchange* x = of_parser(p);
    x->head_bytes += n;
    if (x->target.size() + n > kMaxTarget) {
      x->status = 414;
      return HPE_USER;
    }
    x->target.append(at, n);
    return 0;
  }
  static int header_bytes(llhttp_t* p, const char*, size_t n) {
    Exchange* x = of_parser(p);
    x->head_bytes += n;
    if (x->head_bytes > x->server->max_header_bytes_) {
      x->status = 431;
      return HPE_USER;
    }
    return 0;
  }
  static int header_field(llhttp_t* p, const char* at, size_t n) {
    if (int rc = header_bytes(p, at, n); rc != 0) return rc;
    of_parser(p)->field.append(at, n);
    return 0;
  }
  static int header_field_complete(llhttp_t* p) {
    Exchange* x = of_parser(p);
    x->in_accept = equals_nocase(x->field, "accept");
    if (x->in_accept && !x->accept.empty()) x->accept += ", ";
    x->field.clear();
    return 0;
  }
  static int header_value(llhttp_t* p, const char* at, size_t n) {
    if (int rc = header_bytes(p, at, n); rc != 0) return rc;
    Exchange* x = of_parser(p);
    if (x->in_accept) x->accept.append(at, n);
    return 0;
  }
  static int headers_complete(llhttp_t* p) {
    if ((p->flags & F_CHUNKED) || ((p->flags & F_CONTENT_LENGTH) && p->content_length > kMaxBody)) {
      of_parser(p)->status = 413;
      return HPE_USER;
    }
    return 0;
  }
  static int message_complete(llhttp_t* p) {
    Exchange* x = of_parser(p);
    x->status = -1;  // complete: routed in answer()
    return HPE_PAUSED;
  }

  static llhttp_settings_t make() {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_url = url;
    s.on_header_field = header_field;
    s.on_header_field_complete = header_field_complete;
    s.on_header_value = header_value;
    s.on_headers_complete = headers_complete;
    s.on_message_complete = message_complete;
    return s;
  }

  static void connection(uv_stream_t* s, int status) {
    static_cast<AdminServer*>(s->data)->on_connection(status);
  }
  static void alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
    static char buffer[16384];  // the control loop's one thread reads into it
    *buf = uv_buf_init(buffer, sizeof buffer);
  }
  static void read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void timeout(uv_timer_t* t) {
    Exchange* x = static_cast<Exchange*>(t->data);
    x->status = 408;
    answer(x);
  }
  static void written(uv_write_t* w, int) {
    Exchange* x = static_cast<Exchange*>(w->data);
    x->server->finish(x);
  }
  static void closed(uv_handle_t* h) {
    Exchange* x = static_cast<Exchange*>(h->data);
    if (--x->closing == 0) delete x;
  }
  static void answer(Exchange* x);
};

namespace {

const llhttp_settings_t kAdminSettings = AdminCallbacks::make();

}  // namespace

void AdminCallbacks::read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  Exchange* x = static_cast<Exchange*>(s->data);
  if (x->answered) return;
  if (nread < 0) {
    // The client left (or reset) before its request was complete.
    x->server->finish(x);
    return;
  }
  if (nread == 0) return;
  llhttp_errno_t err = llhttp_execute(&x->parser, buf->base, static_cast<size_t>(nread));
  if (err == HPE_OK) return;
  if (err != HPE_PAUSED && x->status <= 0) x->status = 400;
  answer(x);
}

void AdminCallbacks::answer(Exchange* x) {
  if (x->answered) return;
  x->answered = true;
  uv_timer_stop(&x->timer);
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&x->tcp));
  AdminSource& source = x->server->source_;
  std::string body;
  std::string_view type = "text/plain; charset=utf-8";
  std::string_view extra;
  int status = x->status;
  if (status == -1) {
    std::string_view path = x->target;
    path = path.substr(0, path.find('?'));
    int method = x->parser.method;
    bool get = method == HTTP_GET || method == HTTP_HEAD;
    if (path == "/" && get) {
      status = 200;
      type = "text/html; charset=utf-8";
      extra = live_page_headers();
      body = kLivePage;
    } else if (path == "/metrics" && get) {
      status = 200;
      MetricsFormat format = negotiate_metrics_format(x->accept);
      type = content_type_of(format);
      body = source.metrics(format);
    } else if (path == "/healthz" && get) {
      status = 200;
      body = "ok\n";
    } else if (path == "/readyz" && get) {
      bool ready = source.ready();
      status = ready ? 200 : 503;
      body = ready ? "ready\n" : "stopping\n";
    } else if (path == "/stats" && get) {
      status = 200;
      type = "application/json";
      body = source.stats();
    } else if (path == "/stats/reset" && method == HTTP_POST) {
      source.reset_stats();
      status = 200;
      body = "reset\n";
    } else if (path == "/" || path == "/metrics" || path == "/healthz" || path == "/readyz" ||
               path == "/stats" || path == "/stats/reset") {
      status = 405;
      extra = path == "/stats/reset" ? "Allow: POST\r\n" : "Allow: GET, HEAD\r\n";
    } else {
      status = 404;
    }
  }
  if (body.empty() && status != 200) body = fmt::format("{} {}\n", status, reason_phrase(status));
  // HEAD: the GET's head, its Content-Length included, without the body.
  bool head = x->status == -1 && x->parser.method == HTTP_HEAD;
  x->out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
      status, reason_phrase(status), type, body.size(), extra, head ? "" : body);
  uv_buf_t buf = uv_buf_init(x->out.data(), static_cast<unsigned>(x->out.size()));
  x->write.data = x;
  if (uv_write(&x->write, reinterpret_cast<uv_stream_t*>(&x->tcp), &buf, 1, written) != 0)
    x->server->finish(x);
}

AdminServer::AdminServer(uv_loop_t* loop, AdminSource& source, size_t max_header_bytes,
                         uint64_t header_timeout_ms)
    : loop_(loop),
      source_(source),
      max_header_bytes_(max_header_bytes),
      header_timeout_ms_(header_timeout_ms) {
  live_page_headers();  // made now, not on the first GET /
}

int AdminServer::listen(const struct sockaddr* addr) {
  int rc = uv_tcp_init(loop_, &listener_);
  if (rc != 0) return rc;
  listener_.data = this;
  listening_ = true;
  if ((rc = uv_tcp_bind(&listener_, addr, 0)) != 0 ||
      (rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 64,
                      AdminCallbacks::connection)) != 0)
    return rc;
  return 0;
}

int AdminServer::port() const {
  return bound_port(&listener_);
}

void AdminServer::close() {
  if (listening_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&listener_)))
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  while (live_ != nullptr) finish(live_);
}

void AdminServer::on_connection(int status) {
  if (status != 0) return;
  auto* x = new Exchange{};
  x->server = this;
  HELLO_CHECK_UV(uv_tcp_init(loop_, &x->tcp));
  HELLO_CHECK_UV(uv_timer_init(loop_, &x->timer));
  x->tcp.data = x->timer.data = x;
  x->closing = 2;
  x->next = live_;
  if (live_ != nullptr) live_->prev = x;
  live_ = x;
  ++open_;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_),
                reinterpret_cast<uv_stream_t*>(&x->tcp)) != 0 ||
      open_ > kMaxConnections) {
    finish(x);
    return;
  }
  llhttp_init(&x->parser, HTTP_REQUEST, &kAdminSettings);
  x->parser.data = x;
  HELLO_CHECK_UV(uv_timer_start(&x->timer, AdminCallbacks::timeout, header_timeout_ms_, 0));
  if (uv_read_start(reinterpret_cast<uv_stream_t*>(&x->tcp), AdminCallbacks::alloc,
                    AdminCallbacks::read) != 0)
    finish(x);
}

// Ends an exchange: unlinks it and closes its handles; it is freed in the
// last close callback.
void AdminServer::finish(Exchange* x) {
  if (x->prev != nullptr)
    x->prev->next = x->next;
  else if (live_ == x)
    live_ = x->next;
  else
    return;  // finished already
  if (x->next != nullptr) x->next->prev = x->prev;
  x->prev = x->next = nullptr;
  --open_;
  uv_close(reinterpret_cast<uv_handle_t*>(&x->tcp), AdminCallbacks::closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&x->timer), AdminCallbacks::closed);
}

}  // namespace hello
