// The access log's lines, written through a real LogWriter to a file: the
// CLF line, and each field of the JSON line as a JSON parser reads it.
#include "observe/access_log.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <stdlib.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace hello {
namespace {

using namespace std::string_view_literals;

uint64_t monotonic_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

// The lines that `records` give in `format`, one string each.
std::vector<std::string> lines_of(LogFormat format, const std::vector<LogRecord>& records) {
  char path[] = "/tmp/access_log_test.XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  {
    LogWriter writer(fd, true, 1, format);
    Counter dropped;
    AccessLog log(writer, 0, dropped);
    for (const LogRecord& r : records) log.append(r);
    log.flush_final();
    EXPECT_TRUE(writer.stop());
    EXPECT_EQ(dropped.get(), 0u);
  }
  std::ifstream in(path);
  unlink(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

LogRecord get_root() {
  LogRecord r;
  r.peer = "127.0.0.1";
  r.port = 54321;
  r.method = "GET";
  r.target = "/";
  r.version = 11;
  r.status = 200;
  r.body_bytes = 8;
  r.service_ns = 4'560;
  r.now_ns = monotonic_ns();
  return r;
}

TEST(AccessLog, ClfLineIsNginxs) {
  LogRecord head = get_root();
  head.method = "HEAD";
  head.body_bytes = 0;
  head.version = 10;
  LogRecord malformed = get_root();
  malformed.method = {};
  malformed.status = 400;
  std::vector<std::string> lines = lines_of(LogFormat::clf, {get_root(), head, malformed});
  ASSERT_EQ(lines.size(), 3u);
  // "127.0.0.1 - - [29/Nov/2026:21:42:08 +0000] "GET / HTTP/1.1" 200 8"
  ASSERT_EQ(lines[0].rfind("127.0.0.1 - - [", 0), 0u) << lines[0];
  EXPECT_TRUE(lines[0].ends_with(" +0000] \"GET / HTTP/1.1\" 200 8")) << lines[0];
  EXPECT_TRUE(lines[1].ends_with(" +0000] \"HEAD / HTTP/1.0\" 200 -")) << lines[1];
  EXPECT_TRUE(lines[2].ends_with(" +0000] \"-\" 400 8")) << lines[2];
}

TEST(AccessLog, JsonLineHasEveryField) {
  std::vector<std::string> lines = lines_of(LogFormat::json, {get_root()});
  ASSERT_EQ(lines.size(), 1u);
  const std::string& line = lines[0];
  // The fields in their order, the time aside.
  size_t time_end = line.find("Z\",");
  ASSERT_NE(time_end, std::string::npos) << line;
  EXPECT_EQ(line.substr(time_end),
            R"(Z","peer":"127.0.0.1:54321","worker":0,"method":"GET","target":"/",)"
            R"("protocol":"HTTP/1.1","status":200,"bytes":8,"service_us":4.6})");
  // "time":"2026-11-29T21:42:08.123Z", within a few seconds of now.
  ASSERT_EQ(line.rfind(R"({"time":")", 0), 0u) << line;
  std::string time = line.substr(9, time_end + 1 - 9);
  ASSERT_EQ(time.size(), 24u) << time;
  struct tm tm {};
  const char* rest = strptime(time.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  ASSERT_NE(rest, nullptr) << time;
  EXPECT_EQ(rest[0], '.');
  for (int i = 1; i <= 3; ++i) EXPECT_TRUE(isdigit(static_cast<unsigned char>(rest[i]))) << time;
  EXPECT_EQ(std::string_view(rest + 4), "Z");
  EXPECT_LT(std::abs(static_cast<double>(timegm(&tm) - ::time(nullptr))), 5.0) << time;
}

TEST(AccessLog, JsonLineWithoutRequestLinePeerOrShapeAndWithThem) {
  LogRecord malformed = get_root();
  malformed.method = {};
  malformed.peer = {};
  malformed.status = 400;
  malformed.service_ns = 0;
  LogRecord shaped = get_root();
  shaped.peer = "::1";
  shaped.port = 8;
  shaped.version = 20;
  shaped.status = 503;
  shaped.service_ns = 2'000'049'999;
  shaped.decision = "delay=2s status=503";
  std::vector<std::string> lines = lines_of(LogFormat::json, {malformed, shaped});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].ends_with(R"(Z","peer":null,"worker":0,"method":null,"target":null,)"
                                 R"("protocol":null,"status":400,"bytes":8,"service_us":0.0})"))
      << lines[0];
  EXPECT_TRUE(
      lines[1].ends_with(R"(Z","peer":"[::1]:8","worker":0,"method":"GET","target":"/",)"
                         R"("protocol":"HTTP/2.0","status":503,"bytes":8,)"
                         R"("service_us":2000050.0,"shape_decision":"delay=2s status=503"})"))
      << lines[1];
}

// Every byte value in a target, and a target far longer than HTTP/1 keeps
// (an HTTP/2 :path is only held to the header list's limit): each line
// parses, the target is the escaped first kMaxLoggedTarget bytes.
TEST(AccessLog, HostileAndLongTargetsStayOneLineThatParses) {
  std::string every;
  for (int c = 0; c < 256; ++c) every += static_cast<char>(c);
  std::string quotes(300, '"');
  std::string invalid(300, '\xff');
  std::string long_target = "/" + std::string(10'000, 'a');
  std::vector<LogRecord> records;
  for (const std::string* t : {&every, &quotes, &invalid, &long_target}) {
    LogRecord r = get_root();
    r.target = *t;
    r.method = "\"GET\\\n";  // nothing escapes the method's escaping either
    records.push_back(r);
  }
  std::vector<std::string> lines = lines_of(LogFormat::json, records);
  ASSERT_EQ(lines.size(), records.size());
  simdjson::dom::parser parser;
  for (size_t i = 0; i < lines.size(); ++i) {
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(lines[i]).get(doc), simdjson::SUCCESS) << lines[i];
    std::string_view target, method;
    ASSERT_EQ(doc["target"].get(target), simdjson::SUCCESS);
    ASSERT_EQ(doc["method"].get(method), simdjson::SUCCESS);
    EXPECT_EQ(method, "\"GET\\\n");
    if (i == 1) {
      EXPECT_EQ(target, std::string(kMaxLoggedTarget, '"'));
    } else if (i == 2) {
      EXPECT_EQ(target.size(), 3 * kMaxLoggedTarget);  // U+FFFD each, 3 bytes in UTF-8
    } else if (i == 3) {
      EXPECT_EQ(target, long_target.substr(0, kMaxLoggedTarget));
    }
  }
  // CLF copies the method as it is (llhttp's and nghttp2's names need no
  // escaping), and cuts the target too.
  records[3].method = "GET";
  std::vector<std::string> clf = lines_of(LogFormat::clf, {records[3]});
  ASSERT_EQ(clf.size(), 1u);
  EXPECT_NE(clf[0].find(long_target.substr(0, kMaxLoggedTarget) + " HTTP/1.1\" 200 8"),
            std::string::npos);
  EXPECT_EQ(clf[0].find(long_target.substr(0, kMaxLoggedTarget + 1)), std::string::npos);
}

// A line is dropped, and counted, only when the backlog is full; a
// thousand JSON lines of the longest kind all arrive.
TEST(AccessLog, ManyLongJsonLinesAllArrive) {
  std::string target(kMaxLoggedTarget, '\x01');
  std::vector<LogRecord> records(1000, get_root());
  for (LogRecord& r : records) {
    r.target = target;
    r.decision = "delay=18446744073709551615us status=599";
  }
  std::vector<std::string> lines = lines_of(LogFormat::json, records);
  EXPECT_EQ(lines.size(), records.size());
  simdjson::dom::parser parser;
  for (const std::string& line : lines) {
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
  }
}

// The backlog is what was handed to the writer and not yet written: it
// grows while the consumer reads nothing, is full at kMaxBuffers (then a
// hand-over is refused), and returns to 0 once everything has been read.
TEST(AccessLog, BacklogCountsBuffersNotYetWrittenAndEmptiesWhenRead) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  LogWriter writer(fds[1], true, 1);
  EXPECT_EQ(writer.backlog(0), 0u);
  const std::string full(LogWriter::kBufferSize, 'x');
  size_t handed = 0;
  for (std::string buf = full; handed < 2 * LogWriter::kMaxBuffers && writer.submit(0, buf);
       buf = full)
    ++handed;
  // The pipe takes one buffer (64 KiB) before its writer blocks, so one
  // hand-over may have come back before the backlog filled.
  EXPECT_GE(handed, LogWriter::kMaxBuffers);
  EXPECT_LE(handed, LogWriter::kMaxBuffers + 1);
  EXPECT_EQ(writer.backlog(0), LogWriter::kMaxBuffers);
  size_t read_bytes = 0;
  static char in[1 << 16];
  while (read_bytes < handed * LogWriter::kBufferSize) {
    ssize_t n = read(fds[0], in, sizeof in);
    ASSERT_GT(n, 0);
    read_bytes += static_cast<size_t>(n);
  }
  // Read, but maybe not yet given back: the writer does that after its write.
  for (int i = 0; i < 2000 && writer.backlog(0) != 0; ++i) usleep(1000);
  EXPECT_EQ(writer.backlog(0), 0u);
  EXPECT_TRUE(writer.stop());
  close(fds[0]);
}

}  // namespace
}  // namespace hello
