// Google Benchmark: the socket-free heart on a wrk-style request, alone and
// 16 deep, beside llhttp_execute alone on the same bytes (the floor of any
// llhttp-based server). scripts/test runs it with a short minimum time and
// asserts nothing; docs/performance.md has the figures and the command.
#include <benchmark/benchmark.h>
#include <llhttp.h>

#include <string>

#include "session.h"
#include "test_persona.h"

namespace {

constexpr char kRequest[] =
    "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n";

std::string requests(int depth) {
  std::string r;
  for (int i = 0; i < depth; ++i) r += kRequest;
  return r;
}

void heart(benchmark::State& state) {
  hello::ResponseTable table(hello::test::kTestPersona, {});
  hello::WorkerStats stats;
  hello::Session session(table, stats);
  std::string input = requests(static_cast<int>(state.range(0)));
  std::string out;
  out.reserve(64 * 1024);
  for (auto _ : state) {
    out.clear();
    session.feed(input.data(), input.size(), out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// llhttp alone, with callbacks that do nothing: parsing only.
void llhttp_only(benchmark::State& state) {
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  llhttp_t parser;
  llhttp_init(&parser, HTTP_REQUEST, &settings);
  std::string input = requests(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    llhttp_errno_t err = llhttp_execute(&parser, input.data(), input.size());
    benchmark::DoNotOptimize(err);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(heart)->Arg(1)->Arg(16);
BENCHMARK(llhttp_only)->Arg(1)->Arg(16);

}  // namespace

BENCHMARK_MAIN();
