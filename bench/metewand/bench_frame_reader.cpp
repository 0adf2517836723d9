// FrameReader throughput on 1 MiB lines, side by side with simdjson's own DOM
// parse of the same bytes (a reused parser, input already padded: simdjson at
// its best). All benchmarks of one run see identical input. Run with
// --benchmark_enable_random_interleaving=true --benchmark_repetitions=N so
// that every benchmark sees the same machine load.
//
//   simdjson_dom         simdjson::dom::parser::parse per line (the yardstick)
//   simdjson_dom_fresh_parser  the same with a new parser and a padded copy per line
//   json_validate        dot::json::validate per line (one-shot: its own parser and padded copy)
//   json_parser_validate_padded  one json::Parser, validate_padded per line (what the FrameReader runs)
//   frame_reader_lines   FrameReader::next_line, steady state: one reader over an
//                        endless stream of the 16 lines (ByteSource reads copy
//                        the bytes in 64 KiB pieces, as a pipe does); per
//                        iteration, 16 lines
//   frame_reader_lines_fresh_reader  a new reader per 16 lines (its buffer grows
//                        from 64 KiB and its parser allocates once per reader)
//   frame_reader_frames  FrameReader::read_frame, steady state (a tree per line)
//   line_split_only      memchr splitting alone (the framing overhead's floor)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <simdjson.h>

#include "dot/base/json.h"
#include "dot/metewand/frame_reader.h"
#include "line_gen.h"

namespace {

using dot::metewand::kMaxLineBytes;

constexpr int kLines = 16;
using dot::bench::make_line;

struct Corpus {
  std::vector<std::string> lines;
  std::vector<simdjson::padded_string> padded;
  std::string stream;
  Corpus() {
    for (int i = 0; i < kLines; ++i) {
      lines.push_back(make_line(i));
      padded.emplace_back(lines.back());
      stream += lines.back();
      stream += '\n';
    }
  }
};

const Corpus& corpus() {
  static const Corpus c;
  return c;
}

void set_bytes(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(corpus().stream.size()));
}

void simdjson_dom(benchmark::State& state) {
  const Corpus& c = corpus();
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const auto& p : c.padded) {
      auto doc = parser.parse(p);
      if (doc.error()) state.SkipWithError("simdjson refused the corpus");
      benchmark::DoNotOptimize(doc);
    }
  }
  set_bytes(state);
}

// What json::validate pays before its own checks: a padded copy of the line
// and a freshly allocated simdjson parser per call (base/src/json.cpp).
void simdjson_dom_fresh_parser(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (const auto& line : c.lines) {
      simdjson::padded_string copy(line.data(), line.size());
      simdjson::dom::parser parser;
      auto doc = parser.parse(copy);
      if (doc.error()) state.SkipWithError("simdjson refused the corpus");
      benchmark::DoNotOptimize(doc);
    }
  }
  set_bytes(state);
}

void json_validate(benchmark::State& state) {
  const Corpus& c = corpus();
  dot::json::ReadLimits limits;
  limits.max_bytes = kMaxLineBytes;
  limits.max_depth = dot::metewand::kMaxNestingDepth;
  for (auto _ : state) {
    for (const auto& line : c.lines) {
      auto st = dot::json::validate(line, limits);
      if (!st.ok()) state.SkipWithError("json::validate refused the corpus");
    }
  }
  set_bytes(state);
}

void json_parser_validate_padded(benchmark::State& state) {
  const Corpus& c = corpus();
  dot::json::ReadLimits limits;
  limits.max_bytes = kMaxLineBytes;
  limits.max_depth = dot::metewand::kMaxNestingDepth;
  dot::json::Parser parser;
  for (auto _ : state) {
    for (const auto& p : c.padded) {
      auto st = parser.validate_padded(std::string_view(p.data(), p.size()), limits);
      if (!st.ok()) state.SkipWithError("validate_padded refused the corpus");
    }
  }
  set_bytes(state);
}

// The corpus stream over and over, in pieces of at most 64 KiB (a pipe's).
class EndlessSource final : public dot::ByteSource {
 public:
  explicit EndlessSource(std::string_view bytes) : bytes_(bytes) {}
  dot::Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    std::size_t n = std::min({capacity, bytes_.size() - pos_, std::size_t{64 * 1024}});
    std::memcpy(buffer, bytes_.data() + pos_, n);
    pos_ = (pos_ + n) % bytes_.size();
    return n;
  }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

void frame_reader_lines(benchmark::State& state) {
  const Corpus& c = corpus();
  EndlessSource source(c.stream);
  dot::metewand::FrameReader reader(source);
  for (auto _ : state) {
    for (int n = 0; n < kLines; ++n) {
      auto r = reader.next_line();
      if (!r.ok() || !r->has_value()) {
        state.SkipWithError("FrameReader refused the corpus");
        break;
      }
    }
  }
  set_bytes(state);
}

void frame_reader_lines_fresh_reader(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    dot::MemorySource source(c.stream);
    dot::metewand::FrameReader reader(source);
    int n = 0;
    for (;;) {
      auto r = reader.next_line();
      if (!r.ok()) { state.SkipWithError("FrameReader refused the corpus"); break; }
      if (!r->has_value()) break;
      ++n;
    }
    if (n != kLines) state.SkipWithError("wrong frame count");
  }
  set_bytes(state);
}

void frame_reader_frames(benchmark::State& state) {
  const Corpus& c = corpus();
  EndlessSource source(c.stream);
  dot::metewand::FrameReader reader(source);
  for (auto _ : state) {
    for (int n = 0; n < kLines; ++n) {
      auto r = reader.read_frame();
      if (!r.ok() || !r->has_value()) {
        state.SkipWithError("FrameReader refused the corpus");
        break;
      }
      benchmark::DoNotOptimize((*r)->document.root().size());
    }
  }
  set_bytes(state);
}

void line_split_only(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    const char* p = c.stream.data();
    const char* end = p + c.stream.size();
    int n = 0;
    while (p < end) {
      const void* lf = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (lf == nullptr) break;
      p = static_cast<const char*>(lf) + 1;
      ++n;
    }
    benchmark::DoNotOptimize(n);
  }
  set_bytes(state);
}

BENCHMARK(simdjson_dom)->Unit(benchmark::kMillisecond);
BENCHMARK(simdjson_dom_fresh_parser)->Unit(benchmark::kMillisecond);
BENCHMARK(json_validate)->Unit(benchmark::kMillisecond);
BENCHMARK(json_parser_validate_padded)->Unit(benchmark::kMillisecond);
BENCHMARK(frame_reader_lines)->Unit(benchmark::kMillisecond);
BENCHMARK(frame_reader_lines_fresh_reader)->Unit(benchmark::kMillisecond);
BENCHMARK(frame_reader_frames)->Unit(benchmark::kMillisecond);
BENCHMARK(line_split_only)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
