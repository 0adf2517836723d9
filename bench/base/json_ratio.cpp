// json_ratio [ROUNDS]: side-by-side timing of the strict reader against a
// plain simdjson DOM parse of the same bytes, alternating call by call so
// that both see the same machine load; prints medians and the median of the
// per-round ratios (docs/PERFORMANCE.md), in thread CPU time. Sizes: 1 MiB
// and 8 MiB. The fair steady-state comparison is parse_into (one Parser and
// one Document reused) against simdjson's reused parser, which keeps its
// document too; the one-shot rows pay fresh memory on every call.
#include <simdjson.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "doc_gen.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"

namespace {

// CPU time of this thread: time slices lost to other tenants of this shared
// VM do not count (page faults do: they are this thread's work).
double seconds(const std::function<void()>& f) {
  timespec a{}, b{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  f();
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void fail(const char* what) {
  std::fprintf(stderr, "json_ratio: %s failed\n", what);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
  if (rounds < 1) rounds = 1;
  std::printf("%-5s %-44s %12s %12s %10s\n", "size", "measure (reused parsers)", "ours ms", "simdjson ms", "ratio");
  for (std::size_t mib : {1, 8}) {
    std::string doc = dot::bench::make_document(mib << 20);
    simdjson::padded_string padded(doc);
    simdjson::dom::parser sj;
    dot::json::Parser ours;
    dot::json::Document reused;
    std::string padded_copy = doc + std::string(dot::json::kPadding, ' ');
    std::string_view in_padded(padded_copy.data(), doc.size());
    struct Row {
      const char* name;
      std::function<void()> run;
      std::vector<double> t, base, ratio;
    };
    Row rows[] = {
        {"json::Parser::validate", [&] { if (!ours.validate(doc).ok()) fail("validate"); }, {}, {}, {}},
        {"json::Parser::validate_padded", [&] { if (!ours.validate_padded(in_padded).ok()) fail("validate_padded"); }, {}, {}, {}},
        {"json::Parser::parse_into (reused Document)", [&] { if (!ours.parse_into(doc, reused).ok()) fail("parse_into"); }, {}, {}, {}},
        {"json::Parser::parse (builds tree)", [&] { if (!ours.parse(doc).ok()) fail("parse"); }, {}, {}, {}},
        {"json::validate (one-shot)", [&] { if (!dot::json::validate(doc).ok()) fail("validate"); }, {}, {}, {}},
        {"json::parse (one-shot)", [&] { if (!dot::json::parse(doc).ok()) fail("parse"); }, {}, {}, {}},
    };
    auto simdjson_parse = [&] { if (sj.parse(padded).error()) fail("simdjson"); };
    // Row by row, so that one row's memory (the one-shot rows map and free
    // tens of megabytes per call) does not evict another's; within a row,
    // simdjson and ours alternate, so each ratio compares equal conditions.
    for (Row& r : rows) {
      simdjson_parse();  // warm up: buffers allocated, pages touched
      r.run();
      for (int i = 0; i < rounds; ++i) {
        double b = seconds(simdjson_parse);
        double t = seconds(r.run);
        r.base.push_back(b);
        r.t.push_back(t);
        r.ratio.push_back(t / b);
      }
    }
    for (Row& r : rows)
      std::printf("%-5s %-44s %12.3f %12.3f %9.2fx\n", mib == 1 ? "1MiB" : "8MiB", r.name, median(r.t) * 1e3,
                  median(r.base) * 1e3, median(r.ratio));
  }
  return 0;
}
