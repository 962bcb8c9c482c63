#include "observe/page_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace hello {
namespace {

// The CSP specification's own example (CSP Level 3, section 8.3), and the
// empty string, both checked with Python's hashlib and base64.
TEST(PagePolicy, HashSourcesAreBase64OfSha256) {
  EXPECT_EQ(csp_sha256("alert('Hello, world.');"),
            "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='");
  EXPECT_EQ(csp_sha256(""), "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
}

TEST(PagePolicy, ThePolicyNamesTheScriptAndTheStyleByTheirHashes) {
  std::string page =
      "<!doctype html><style>\nb{color:red}\n</style><p>x</p>"
      "<script>\nalert('Hello, world.');</script>";
  std::string headers = page_headers_for(page);
  EXPECT_EQ(headers,
            "Cache-Control: no-store\r\n"
            "Content-Security-Policy: default-src 'none'; script-src " +
                csp_sha256("\nalert('Hello, world.');") + "; style-src " +
                csp_sha256("\nb{color:red}\n") +
                "; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
                "frame-ancestors 'none'\r\n"
                "X-Content-Type-Options: nosniff\r\n"
                "Referrer-Policy: no-referrer\r\n");
  EXPECT_EQ(headers.find("unsafe"), std::string::npos);
  // A byte more in the script is another hash.
  std::string changed = page;
  changed.insert(changed.find("alert"), " ");
  EXPECT_NE(page_headers_for(changed), headers);
}

// The policy allows one script and one style: a page with another, or
// without one, is the page's bug, caught where the headers are made.
TEST(PagePolicy, APageWithASecondScriptOrNoStyleIsRefused) {
  EXPECT_DEATH(page_headers_for("<style>a</style><script>b</script><script>c</script>"),
               "check failed");
  EXPECT_DEATH(page_headers_for("<script>b</script>"), "check failed");
}

TEST(PagePolicy, TheLivePagesHeadersAreMadeOnce) {
  std::string_view a = live_page_headers(), b = live_page_headers();
  EXPECT_EQ(a.data(), b.data());
  EXPECT_NE(a.find("script-src 'sha256-"), std::string_view::npos);
}

}  // namespace
}  // namespace hello
