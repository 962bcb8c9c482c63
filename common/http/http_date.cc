#include "http/http_date.h"

#include <cstring>

namespace hello {

namespace {

constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

}  // namespace

void format_http_date(time_t t, char* out) {
  struct tm tm;
  gmtime_r(&t, &tm);
  auto two = [](char* at, int v) {
    at[0] = static_cast<char>('0' + v / 10);
    at[1] = static_cast<char>('0' + v % 10);
  };
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  //  0    5  8   12   17 20 23 26
  memcpy(out, kDays[tm.tm_wday], 3);
  memcpy(out + 3, ", ", 2);
  two(out + 5, tm.tm_mday);
  out[7] = ' ';
  memcpy(out + 8, kMonths[tm.tm_mon], 3);
  out[11] = ' ';
  int year = tm.tm_year + 1900;
  two(out + 12, year / 100 % 100);
  two(out + 14, year % 100);
  out[16] = ' ';
  two(out + 17, tm.tm_hour);
  out[19] = ':';
  two(out + 20, tm.tm_min);
  out[22] = ':';
  two(out + 23, tm.tm_sec);
  memcpy(out + 25, " GMT", 4);
}

}  // namespace hello
