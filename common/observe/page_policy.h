// What the admin port's live page may do (docs/observability.md), as the
// headers it is served with: never cached (it is compiled in, and a new
// binary may poll a new /stats), and a Content-Security-Policy that lets it
// run nothing but its own inline script and style, each named by its
// SHA-256 (CSP Level 2 hash sources, not 'unsafe-inline'), and fetch
// nothing but this origin's /stats. Socket-free.
#pragma once

#include <string>
#include <string_view>

namespace hello {

// The page's extra header lines, each ending in CRLF. Made from kLivePage
// on the first call (the admin port makes it when it starts), the same
// string after; any thread may call it.
std::string_view live_page_headers();

// The headers for `page`, whose one <script> and one <style> element (no
// attributes) the policy allows; anything else in it is a bug of the page,
// and a failed HELLO_CHECK.
std::string page_headers_for(std::string_view page);

// 'sha256-BASE64' of `text`: a CSP hash source (CSP Level 3, section 8.3).
std::string csp_sha256(std::string_view text);

}  // namespace hello
