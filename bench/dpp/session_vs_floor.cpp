// session_vs_floor [RUNS]: times whole processes, interleaved, side by side:
//   A  dpp-floor dpp-floor-peer --no-store   (spawn a libc-only program, five
//      600-byte pipe round trips, wait)
//   B  dpp-session-once dot-hello            (a full five-call DPP session)
// and prints the median wall time and child CPU time (user + system of the
// process and everything it reaped) of each, and the ratios B/A. Run under
// nice; docs/PERFORMANCE.md records the figures.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dot/base/process.h"

using namespace dot;

namespace {

double children_cpu_ms() {
  struct rusage ru {};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1000.0 + tv.tv_usec / 1000.0; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

struct Run {
  double wall_ms;
  double cpu_ms;  // user + system of the child and everything it reaped: what load inflates least
};

Run run(const std::vector<std::string>& argv) {
  SpawnOptions o;
  o.path = argv[0];
  o.argv = argv;
  o.env = {"LANG=C", "TMPDIR=/tmp"};
  o.stdin_mode = StdioMode::DevNull;
  o.stdout_mode = StdioMode::DevNull;
  o.stderr_mode = StdioMode::Inherit;
  double c0 = children_cpu_ms();
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
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), children_cpu_ms() - c0};
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
  std::vector<double> a, b, ca, cb;
  for (int i = 0; i < 5; ++i) {  // warm the page cache
    run(floor_cmd);
    run(session_cmd);
  }
  for (int i = 0; i < runs; ++i) {
    Run f = run(floor_cmd);
    Run s = run(session_cmd);
    a.push_back(f.wall_ms);
    b.push_back(s.wall_ms);
    ca.push_back(f.cpu_ms);
    cb.push_back(s.cpu_ms);
  }
  double ma = median(a), mb = median(b), mca = median(ca), mcb = median(cb);
  std::printf("runs %d (interleaved)    wall median   cpu median\n", runs);
  std::printf("floor                 %9.3f ms %9.3f ms\n", ma, mca);
  std::printf("session               %9.3f ms %9.3f ms\n", mb, mcb);
  std::printf("ratio                 %9.2f    %9.2f\n", mb / ma, mcb / mca);
  return 0;
}
