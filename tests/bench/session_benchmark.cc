// Google Benchmark: the socket-free heart on a wrk-style request, alone and
// 16 deep, beside llhttp_execute alone on the same bytes (the floor of any
// llhttp-based server). scripts/test runs it with a short minimum time and
// asserts nothing; docs/performance.md has the figures and the command.
#include <benchmark/benchmark.h>
#include <llhttp.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "http1/session.h"
#include "http_bytes.h"
#include "test_persona.h"

namespace {

std::string requests(int depth) {
  return hello::test::repeat(hello::test::kWrkRequest, depth);
}

// One feed of `input` through the heart, and through llhttp alone: the
// bodies of every timed loop below.
inline void feed_heart(hello::Session& session, const std::string& input, std::string& out) {
  out.clear();
  session.feed(input.data(), input.size(), out);
  benchmark::DoNotOptimize(out.data());
}

inline void feed_llhttp(llhttp_t& parser, const std::string& input) {
  llhttp_errno_t err = llhttp_execute(&parser, input.data(), input.size());
  benchmark::DoNotOptimize(err);
}

void heart(benchmark::State& state) {
  hello::ResponseTable table(hello::test::kTestPersona, {});
  hello::WorkerStats stats;
  hello::Accounting sink(stats);
  hello::Session session(table, sink);
  std::string input = requests(static_cast<int>(state.range(0)));
  std::string out;
  out.reserve(64 * 1024);
  for (auto _ : state) feed_heart(session, input, out);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The same with --shape on: every request's target and headers are watched
// for shaping parameters, and wrk's requests carry none (docs/shaping.md).
void heart_shape_on(benchmark::State& state) {
  hello::TableOptions options;
  options.shape = true;
  hello::ResponseTable table(hello::test::kTestPersona, options);
  hello::WorkerStats stats;
  hello::Accounting sink(stats);
  hello::Dice dice(1);
  hello::Session session(table, sink, {}, &dice);
  std::string input = requests(static_cast<int>(state.range(0)));
  std::string out;
  out.reserve(64 * 1024);
  for (auto _ : state) feed_heart(session, input, out);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// llhttp alone, with callbacks that do nothing: parsing only.
void llhttp_only(benchmark::State& state) {
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  llhttp_t parser;
  llhttp_init(&parser, HTTP_REQUEST, &settings);
  std::string input = requests(static_cast<int>(state.range(0)));
  for (auto _ : state) feed_llhttp(parser, input);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The heart against llhttp alone measured in pairs: each iteration times a
// short burst of one and then of the other, a fraction of a millisecond
// apart, so a disturbance from the machine's other tenants hits both
// sides of a pair alike. The counter "ratio" is the median of the pairs'
// ratios, the figure docs/performance.md and scripts/bench report.
void heart_vs_llhttp(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  constexpr int kBurst = 64;  // feeds per side: about 10 to 200 µs
  hello::ResponseTable table(hello::test::kTestPersona, {});
  hello::WorkerStats stats;
  hello::Accounting sink(stats);
  hello::Session session(table, sink);
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  llhttp_t parser;
  llhttp_init(&parser, HTTP_REQUEST, &settings);
  std::string input = requests(static_cast<int>(state.range(0)));
  std::string out;
  out.reserve(64 * 1024);
  std::vector<double> ratios;
  ratios.reserve(1 << 16);
  auto time_heart = [&] {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kBurst; ++i) feed_heart(session, input, out);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto time_llhttp = [&] {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < kBurst; ++i) feed_llhttp(parser, input);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  bool heart_first = true;
  for (auto _ : state) {
    // Which side goes first alternates, so neither gains from going second.
    double h, l;
    if (heart_first) {
      h = time_heart();
      l = time_llhttp();
    } else {
      l = time_llhttp();
      h = time_heart();
    }
    heart_first = !heart_first;
    if (ratios.size() < ratios.capacity()) ratios.push_back(h / l);
  }
  std::sort(ratios.begin(), ratios.end());
  state.counters["ratio"] = ratios.empty() ? 0.0 : ratios[ratios.size() / 2];
  state.counters["pairs"] = static_cast<double>(ratios.size());
}

// The JSON echo of a route file: a POST with an 829-byte pretty-printed
// document, parsed and sent back minified.
void heart_echo(benchmark::State& state) {
  std::vector<hello::FileRoute> routes{hello::test::echo_route()};
  hello::TableOptions options;
  options.routes = &routes;
  hello::ResponseTable table(hello::test::kTestPersona, options);
  hello::WorkerStats stats;
  hello::Accounting sink(stats);
  hello::Session session(table, sink);
  std::string doc = "{\n \"items\": [";
  for (int i = 0; i < 24; ++i)
    doc += std::string(i ? "," : "") + "\n  {\"sku\": \"SKU-" + std::to_string(1000 + i) +
           "\", \"qty\": " + std::to_string(i % 5 + 1) + "}";
  doc += "\n ],\n \"currency\": \"EUR\"\n}";
  std::string input =
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(doc.size()) + "\r\n\r\n" + doc;
  std::string out;
  out.reserve(64 * 1024);
  for (auto _ : state) feed_heart(session, input, out);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(doc.size()));
}

BENCHMARK(heart)->Arg(1)->Arg(16);
BENCHMARK(heart_shape_on)->Arg(1)->Arg(16);
BENCHMARK(heart_vs_llhttp)->Arg(1)->Arg(16);
BENCHMARK(heart_echo);
BENCHMARK(llhttp_only)->Arg(1)->Arg(16);

}  // namespace

BENCHMARK_MAIN();
