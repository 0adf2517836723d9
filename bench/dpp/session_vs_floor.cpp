// session_vs_floor [RUNS]: times whole processes, interleaved, side by side:
//   A  dpp-floor dpp-floor-peer --no-store   (spawn a libc-only program, five
//      600-byte pipe round trips, wait)
//   B  dpp-session-once dot-hello            (a full five-call DPP session)
// and prints the median wall time of each and the ratio B/A. Run under nice
// on an otherwise idle machine; docs/PERFORMANCE.md records the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dot/base/process.h"

using namespace dot;

namespace {

double run_ms(const std::vector<std::string>& argv) {
  SpawnOptions o;
  o.path = argv[0];
  o.argv = argv;
  o.env = {"LANG=C", "TMPDIR=/tmp"};
  o.stdin_mode = StdioMode::DevNull;
  o.stdout_mode = StdioMode::DevNull;
  o.stderr_mode = StdioMode::Inherit;
  auto t0 = Clock::now();
  auto child = spawn(o);
  if (!child.ok()) {
    std::fprintf(stderr, "%s\n", child.error().line().c_str());
    std::exit(1);
  }
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(30));
  auto t1 = Clock::now();
  if (!st || !st->success()) {
    std::fprintf(stderr, "%s failed\n", argv[0].c_str());
    std::exit(1);
  }
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  std::string bin = DOT_BENCH_BIN_DIR;
  std::vector<std::string> floor_cmd = {bin + "/dpp-floor", bin + "/dpp-floor-peer", "--no-store"};
  std::vector<std::string> session_cmd = {bin + "/dpp-session-once", bin + "/dot-hello"};
  std::vector<double> a, b;
  for (int i = 0; i < 5; ++i) {  // warm the page cache
    run_ms(floor_cmd);
    run_ms(session_cmd);
  }
  for (int i = 0; i < runs; ++i) {
    a.push_back(run_ms(floor_cmd));
    b.push_back(run_ms(session_cmd));
  }
  double ma = median(a), mb = median(b);
  std::printf("runs %d (interleaved)\nfloor   median %.3f ms\nsession median %.3f ms\nratio   %.2f\n", runs, ma, mb,
              mb / ma);
  return 0;
}
