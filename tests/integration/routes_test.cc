// --routes FILE.json on the real binaries: the example file answered byte
// for byte in the persona's layout, the JSON echo over a socket, and bad
// files refused at startup.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "test_client.h"

namespace hello::test {
namespace {

namespace fs = std::filesystem;

const std::string kExample = std::string(HELLO_SOURCE_DIR) + "/docs/examples/routes.json";

std::string get(std::string_view path) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: t\r\n\r\n";
}

std::string post(std::string_view body, std::string_view target = "/echo") {
  return "POST " + std::string(target) +
         " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// Sanic's layout: content-length, connection, content-type, then the route's headers.
std::string sanic(std::string_view status, std::string_view type, std::string_view extra,
                  std::string_view body) {
  return "HTTP/1.1 " + std::string(status) + "\r\ncontent-length: " + std::to_string(body.size()) +
         "\r\nconnection: keep-alive\r\ncontent-type: " + std::string(type) + "\r\n" +
         std::string(extra) + "\r\n" + std::string(body);
}

TEST(Routes, TheExampleFileIsAnsweredByteForByte) {
  ServerProcess s("sanic", {"--routes", kExample});
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/health")));
  EXPECT_EQ(c.read_response(), sanic("200 OK", "text/plain; charset=utf-8", "", "ok\n"));
  ASSERT_TRUE(c.send(get("/api/v1/status?verbose=1")));
  EXPECT_EQ(c.read_response(),
            sanic("200 OK", "application/json",
                  "Cache-Control: no-store\r\nX-Request-Source: hello-family\r\n",
                  R"({"status":"ready","version":[1,4,2],"features":{"echo":true}})"));
  // The file's own Content-Type is sent as one of its headers, not in the
  // persona's place.
  ASSERT_TRUE(c.send(get("/teapot")));
  EXPECT_EQ(c.read_response(),
            "HTTP/1.1 418 I'm a teapot\r\ncontent-length: 12\r\nconnection: keep-alive\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n\r\nI'm a teapot");
  // GET / of the file replaces the persona's; its /json stays.
  ASSERT_TRUE(c.send(get("/")));
  EXPECT_EQ(c.read_response(),
            sanic("200 OK", "text/plain; charset=utf-8", "", "Hello from a route file!"));
  ASSERT_TRUE(c.send(get("/json")));
  EXPECT_EQ(c.read_response(), sanic("200 OK", "application/json", "", R"({"hello":"world"})"));
  ASSERT_TRUE(c.send(post(R"({ "a" : [1, 2] })")));
  EXPECT_EQ(c.read_response(), sanic("200 OK", "application/json", "", R"({"a":[1,2]})"));
  EXPECT_EQ(s.stop(), 0);
}

// Spring's head puts Content-Type before the extra headers; a file that
// gives Content-Type after another header gets them in its own order.
TEST(Routes, HeadersIncludingContentTypeAreSentInTheFileOrder) {
  fs::path file =
      fs::temp_directory_path() / ("order-routes-" + std::to_string(getpid()) + ".json");
  std::ofstream(file) << R"({"routes": [{"method": "GET", "path": "/probe", "body": "probe",
      "headers": [["X-Probe", "1"], ["Content-Type", "text/plain"]]}]})";
  ServerProcess s("spring", {"--routes", file.string()});
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/probe")));
  EXPECT_EQ(mask_date(c.read_response()),
            mask_date("HTTP/1.1 200 \r\nX-Probe: 1\r\nContent-Type: text/plain\r\n"
                      "Content-Length: 5\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\nprobe"));
  EXPECT_EQ(s.stop(), 0);
  fs::remove(file);
}

TEST(Routes, EchoOverASocket) {
  ServerProcess s("tornado", {"--routes", kExample, "--max-body-bytes", "200"});
  Client c(s.port());
  // Chunked, and three requests pipelined in one write.
  std::string chunked =
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4\r\n[1, \r\n3\r\n2 ]\r\n0\r\n\r\n";
  ASSERT_TRUE(c.send(post("{\"n\": 1}") + chunked + post("{\"n\":  3}")));
  for (std::string_view body : {R"({"n":1})", "[1,2]", R"({"n":3})"}) {
    std::string r = c.read_response();
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos)
        << r;
    EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), body);
  }
  // Not JSON: 400 with the reason, and the connection goes on.
  ASSERT_TRUE(c.send(post("{\"n\": }")));
  std::string bad = c.read_response();
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  EXPECT_NE(bad.find("\r\n\r\ninvalid JSON: "), std::string::npos) << bad;
  ASSERT_TRUE(c.send(post("[]")));
  EXPECT_EQ(c.read_response().substr(0, 17), "HTTP/1.1 200 OK\r\n");
  // Over --max-body-bytes: 413, then the server closes.
  ASSERT_TRUE(c.send(post("[" + std::string(300, ' ') + "]")));
  auto rest = c.read_to_eof();
  ASSERT_TRUE(rest.has_value()) << "the connection must close";
  EXPECT_EQ(rest->rfind("HTTP/1.1 413 ", 0), 0u) << *rest;
  EXPECT_EQ(s.stop(), 0);
}

// With --shape, the echo is still the body of a shaped answer (another
// status, a drip) and a body that is not JSON still gets the echo's 400.
TEST(Routes, AShapedEchoStillEchoesAndStillRefusesWhatIsNotJson) {
  ServerProcess s("tornado", {"--routes", kExample, "--shape"});
  Client c(s.port());
  ASSERT_TRUE(c.send(post("{\"n\": 1}", "/echo?status=201")));
  std::string created = c.read_response();
  EXPECT_EQ(created.rfind("HTTP/1.1 201 Created\r\n", 0), 0u) << created;
  EXPECT_EQ(created.substr(created.find("\r\n\r\n") + 4), R"({"n":1})");
  ASSERT_TRUE(c.send(post("{\"n\": }", "/echo?status=201")));
  std::string bad = c.read_response();
  EXPECT_EQ(bad.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
  EXPECT_NE(bad.find("\r\n\r\ninvalid JSON: "), std::string::npos) << bad;
  ASSERT_TRUE(c.send(post("{\"a\": [1, 2]}", "/echo?drip=20ms")));
  std::string dripped = c.read_response();
  EXPECT_EQ(dripped.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << dripped;
  EXPECT_EQ(dripped.substr(dripped.find("\r\n\r\n") + 4), R"({"a":[1,2]})");
  EXPECT_EQ(s.stop(), 0);
}

// A Content-Length within a huge --max-body-bytes must not make the server
// set the whole body aside before it arrives (it aborted on bad_alloc): one
// of 10^12 bytes, and ones of 4 GB that a reservation would get (overcommit),
// add less than 64 MiB of address space to the server, and no resident memory
// to speak of, while they wait for their bodies.
TEST(Routes, AHugeDeclaredBodyCostsNothingUntilItArrives) {
  ServerProcess s("sanic", {"--routes", kExample, "--max-body-bytes", "1099511627776"});
  {
    // The first connection's allocations (the worker's malloc arena) are
    // not the declared bodies'.
    Client c(s.port());
    ASSERT_TRUE(c.send(post("[0]")));
    ASSERT_EQ(c.read_response(), sanic("200 OK", "application/json", "", "[0]"));
  }
  long size_before = proc_status_kib(s.pid(), "VmSize");
  long rss_before = proc_status_kib(s.pid(), "VmRSS");
  ASSERT_GT(size_before, 0);
  ASSERT_GT(rss_before, 0);
  long size_during = 0, rss_during = 0;
  {
    std::vector<std::unique_ptr<Client>> waiting;
    for (const char* length : {"1000000000000", "4000000000", "4000000000"}) {
      waiting.push_back(std::make_unique<Client>(s.port()));
      ASSERT_TRUE(
          waiting.back()->send(std::string("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: ") +
                               length + "\r\n\r\n{"));
    }
    // Each is waiting for its body once a request after them is answered
    // on a connection of its own, by the one worker.
    Client probe(s.port());
    ASSERT_TRUE(probe.send(get("/health")));
    ASSERT_EQ(probe.read_response(), sanic("200 OK", "text/plain; charset=utf-8", "", "ok\n"));
    std::this_thread::sleep_for(100ms);
    size_during = proc_status_kib(s.pid(), "VmSize");
    rss_during = proc_status_kib(s.pid(), "VmRSS");
  }
  EXPECT_LT(size_during - size_before, 64 * 1024) << "KiB of address space";
  EXPECT_LT(rss_during - rss_before, 16 * 1024) << "KiB of RSS";
  Client c(s.port());
  ASSERT_TRUE(c.send(post("[1]")));
  EXPECT_EQ(c.read_response(), sanic("200 OK", "application/json", "", "[1]"));
  EXPECT_EQ(s.stop(), 0);
}

TEST(Routes, HelloFloorRefusesARouteFile) {
  RunResult r = run_binary(binary_path("floor"), {"-p", "0", "--routes", kExample});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-floor: --routes: hello-floor parses nothing and answers every request alike\n");
}

TEST(Routes, ABadFileIsOneLineNamingThePlaceAndExit2) {
  fs::path file = fs::temp_directory_path() / ("bad-routes-" + std::to_string(getpid()) + ".json");
  std::ofstream(file)
      << "{\"routes\": [\n  {\"method\": \"GET\", \"path\": \"/\",\n   \"bdy\": \"x\"}]}\n";
  RunResult r = run_binary(binary_path("sanic"), {"-p", "0", "--routes", file.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-sanic: --routes: " + file.string() +
                ":3:4: unknown key \"bdy\" in routes[0] (known: method, path, status, headers, "
                "body, json, echo, delay, shape)\n");
  EXPECT_EQ(r.out, "") << "nothing listened";

  std::ofstream(file, std::ios::trunc)
      << "{\"routes\": [\n  {\"method\": \"GET\" \"path\": \"/\"}]}\n";
  r = run_binary(binary_path("tornado"), {"-p", "0", "--routes", file.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hello-tornado: --routes: " + file.string() +
                       ":2:20: The JSON document has an improper structure: missing or superfluous "
                       "commas, braces, missing keys, etc.\n");

  r = run_binary(binary_path("flask"), {"-p", "0", "--routes", "/nonexistent.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hello-flask: --routes: /nonexistent.json: cannot read: No such file or directory\n");
  fs::remove(file);
}

}  // namespace
}  // namespace hello::test
