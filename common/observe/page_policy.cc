#include "observe/page_policy.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include "base/check.h"
#include "observe/live_page.h"

namespace hello {

namespace {

// The text of the one element `tag` of `page`: between "<tag>" and "</tag>".
std::string_view element_text(std::string_view page, std::string_view tag) {
  std::string open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
  size_t begin = page.find(open);
  HELLO_CHECK(begin != std::string_view::npos);
  begin += open.size();
  size_t end = page.find(close, begin);
  HELLO_CHECK(end != std::string_view::npos);
  // One of each: a second element would be refused by the browser.
  HELLO_CHECK(page.find(fmt::format("<{}", tag), end) == std::string_view::npos);
  return page.substr(begin, end - begin);
}

}  // namespace

std::string csp_sha256(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HELLO_CHECK(EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) == 1);
  HELLO_CHECK(length == 32);
  unsigned char base64[45];  // 4 * ceil(32 / 3) and a NUL
  HELLO_CHECK(EVP_EncodeBlock(base64, digest, static_cast<int>(length)) == 44);
  return fmt::format("'sha256-{}'", reinterpret_cast<const char*>(base64));
}

std::string page_headers_for(std::string_view page) {
  return fmt::format(
      "Cache-Control: no-store\r\n"
      "Content-Security-Policy: default-src 'none'; script-src {}; style-src {}; "
      "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
      "frame-ancestors 'none'\r\n"
      "X-Content-Type-Options: nosniff\r\n"
      "Referrer-Policy: no-referrer\r\n",
      csp_sha256(element_text(page, "script")), csp_sha256(element_text(page, "style")));
}

std::string_view live_page_headers() {
  static const std::string headers = page_headers_for(kLivePage);
  return headers;
}

}  // namespace hello
