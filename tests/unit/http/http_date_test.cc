#include "http/http_date.h"

#include <gtest/gtest.h>

#include <string>

namespace hello {
namespace {

std::string format(time_t t) {
  char buf[kHttpDateLength];
  format_http_date(t, buf);
  return std::string(buf, kHttpDateLength);
}

TEST(HttpDate, FormatsRfcExample) {
  // RFC 9110 section 5.6.7's own example.
  EXPECT_EQ(format(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(HttpDate, FormatsEpochAndLeapDay) {
  EXPECT_EQ(format(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(format(1709251199), "Thu, 29 Feb 2024 23:59:59 GMT");
}

TEST(HttpDate, FormatsTheFixtureCaptureDay) {
  EXPECT_EQ(format(1795988658), "Sun, 29 Nov 2026 21:44:18 GMT");
}

}  // namespace
}  // namespace hello
