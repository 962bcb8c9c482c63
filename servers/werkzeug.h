// The Flask app of the articles and Werkzeug's error pages, shared by the
// two personas that run it: Flask's own server and gunicorn.
#pragma once

#include "persona/persona.h"

namespace hello::werkzeug {

inline constexpr Body kJson{"application/json", "{\"hello\":\"world\"}\n"};

inline constexpr Route kRoutes[] = {
    {"/", {"text/html; charset=utf-8", "Hello!!!"}},
    {"/index", {"text/html; charset=utf-8", "hello world"}},
    {"/json", kJson},
};

inline constexpr std::string_view kHtml = "text/html; charset=utf-8";

inline constexpr ErrorBody kErrors[] = {
    {400,
     {kHtml,
      "<!doctype html>\n<html lang=en>\n<title>400 Bad Request</title>\n<h1>Bad Request</h1>\n"
      "<p>The browser (or proxy) sent a request that this server could not understand.</p>\n"}},
    {404,
     {kHtml,
      "<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n"
      "<p>The requested URL was not found on the server. If you entered the URL manually please "
      "check your spelling and try again.</p>\n"}},
    {405,
     {kHtml,
      "<!doctype html>\n<html lang=en>\n<title>405 Method Not Allowed</title>\n"
      "<h1>Method Not Allowed</h1>\n<p>The method is not allowed for the requested URL.</p>\n"}},
};

// Werkzeug's page for every other status: title and heading only.
inline constexpr std::string_view kErrorFormat =
    "<!doctype html>\n<html lang=en>\n<title>{code} {reason}</title>\n<h1>{reason}</h1>\n";

}  // namespace hello::werkzeug
