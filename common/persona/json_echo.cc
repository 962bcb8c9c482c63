#include "persona/json_echo.h"

#include <simdjson.h>

#include "base/check.h"

namespace hello {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING);

namespace {

struct JsonScratch {
  simdjson::dom::parser parser;
  std::string text;
};

JsonScratch& json_scratch() {
  thread_local JsonScratch scratch;
  return scratch;
}

}  // namespace

EchoResult echo_json(std::string& body) {
  JsonScratch& js = json_scratch();
  size_t n = body.size();
  body.reserve(n + kJsonPadding);  // readable padding, as simdjson requires
  simdjson::error_code err = js.parser.parse(body.data(), n, false).error();
  if (err != simdjson::SUCCESS) {
    // One line saying why, as simdjson words it.
    js.text.assign("invalid JSON: ");
    js.text.append(simdjson::error_message(err));
    js.text.push_back('\n');
    return {false, js.text};
  }
  if (js.text.size() < n) js.text.resize(n);
  size_t length = 0;
  err = simdjson::minify(body.data(), n, js.text.data(), length);
  HELLO_CHECK(err == simdjson::SUCCESS);  // the parser has just accepted the same bytes
  return {true, {js.text.data(), length}};
}

}  // namespace hello
