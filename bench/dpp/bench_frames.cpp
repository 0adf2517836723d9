// Frame decode throughput for 64 KiB frames, side by side with a
// memcpy-bound read of the same bytes through the same byte source.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>

#include "dot/dpp/body.h"
#include "dot/dpp/frame.h"

namespace {

// A stream of `n` frames whose bodies are 65536-byte JSON responses: a result
// object with an array of small objects (realistic structure, not one string).
std::string make_stream(int n) {
  std::string body = "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"items\":[";
  int i = 0;
  while (body.size() < 65536 - 200) {
    body += (i ? "," : "");
    body += "{\"name\":\"item-" + std::to_string(i) + ".txt\",\"size\":" + std::to_string(i * 7) + ",\"ok\":true}";
    ++i;
  }
  body += "],\"pad\":\"";
  body += std::string(65536 - body.size() - 4, 'p');
  body += "\"}}";
  std::string frame = *dot::dpp::encode_frame(body);
  std::string out;
  for (int k = 0; k < n; ++k) out += frame;
  return out;
}

const std::string& stream() {
  static const std::string s = make_stream(64);  // 4 MiB
  return s;
}

void BM_MemcpyRead(benchmark::State& state) {
  const std::string& s = stream();
  std::string buf(65536 + 64, '\0');
  for (auto _ : state) {
    dot::MemorySource src(s);
    for (;;) {
      auto n = src.read(buf.data(), buf.size());
      if (*n == 0) break;
      benchmark::DoNotOptimize(buf.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(s.size()));
}

void BM_FrameRead(benchmark::State& state) {
  const std::string& s = stream();
  for (auto _ : state) {
    dot::MemorySource src(s);
    dot::dpp::FrameReader r(src);
    for (;;) {
      auto f = r.next();
      if (!f.ok() || !f->has_value()) break;
      benchmark::DoNotOptimize((*f)->body.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(s.size()));
}

void BM_FrameReadAndCheckBody(benchmark::State& state) {
  const std::string& s = stream();
  for (auto _ : state) {
    dot::MemorySource src(s);
    dot::dpp::FrameReader r(src);
    for (;;) {
      auto f = r.next();
      if (!f.ok() || !f->has_value()) break;
      auto st = dot::dpp::check_body((*f)->body, (*f)->body_offset);
      if (!st.ok()) state.SkipWithError("body check failed");
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(s.size()));
}

BENCHMARK(BM_MemcpyRead)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_FrameRead)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_FrameReadAndCheckBody)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
