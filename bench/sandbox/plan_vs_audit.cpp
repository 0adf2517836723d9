// plan_vs_audit [ITERATIONS]: what process containment adds to a whole
// `dot-core plan` with dot-hello, side by side with audit in one run.
//
// Two fresh roots, one with dot-hello registered as audit, one as process;
// the two plans alternate (audit, process, audit, ...) so that machine load
// hits both alike; each is timed as a whole process, spawn to reap. Prints the
// median and quartiles of each and the median of the paired differences.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/process.h"

namespace {

namespace fs = std::filesystem;
const std::string kBin = DOT_BIN_DIR;

double children_cpu_ms() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

// Runs dot-core; returns wall milliseconds, or a negative value on failure.
// `cpu` gets the CPU time of dot-core and the plugin it reaped (load-independent).
double run(const std::vector<std::string>& args, double* cpu = nullptr) {
  const double cpu0 = children_cpu_ms();
  dot::SpawnOptions o;
  o.path = kBin + "/dot-core";
  o.argv = {"dot-core"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"LANG=C"};
  o.stdin_mode = dot::StdioMode::DevNull;
  o.stdout_mode = dot::StdioMode::DevNull;
  auto t0 = dot::Clock::now();
  auto child = dot::spawn(o);
  if (!child.ok()) return -1;
  auto err = dot::read_all(child->stderr_fd().get(), 1 << 16);
  auto st = child->wait_until(dot::Clock::now() + std::chrono::seconds(30));
  double ms = std::chrono::duration<double, std::milli>(dot::Clock::now() - t0).count();
  if (cpu) *cpu = children_cpu_ms() - cpu0;
  if (!st || !st->success()) {
    std::fprintf(stderr, "dot-core %s failed: %s", args[0].c_str(), err.ok() ? err->c_str() : "");
    return -1;
  }
  return ms;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 41;
  char tmpl[] = "/tmp/dot-bench-plan-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const fs::path base = tmpl;
  const std::string audit_root = (base / "audit").string(), process_root = (base / "process").string();
  int rc = 0;
  if (run({"init", "--root", audit_root}) < 0 || run({"init", "--root", process_root}) < 0 ||
      run({"register", "--root", audit_root, "--plugin", kBin + "/dot-hello", "--assurance", "audit"}) < 0 ||
      run({"register", "--root", process_root, "--plugin", kBin + "/dot-hello", "--assurance", "process"}) < 0) {
    rc = 1;
  } else {
    std::vector<double> audit, process, diff, audit_cpu, process_cpu;
    for (int i = 0; i < n + 2 && rc == 0; ++i) {
      double ac = 0, pc = 0;
      double a = run({"plan", "--root", audit_root, "--allow-audit-plugin"}, &ac);
      double p = run({"plan", "--root", process_root, "--require-process-sandbox"}, &pc);
      if (a < 0 || p < 0) rc = 1;
      if (i < 2) continue;  // warm-up: page cache, first database pages
      audit.push_back(a);
      process.push_back(p);
      diff.push_back(p - a);
      audit_cpu.push_back(ac);
      process_cpu.push_back(pc);
    }
    if (rc == 0) {
      std::printf("dot-core plan with dot-hello, %d interleaved pairs (ms, whole process)\n", n);
      std::printf("%-28s %8s %8s %8s\n", "", "p25", "median", "p75");
      std::printf("%-28s %8.2f %8.2f %8.2f\n", "audit (--allow-audit-plugin)", quantile(audit, .25),
                  quantile(audit, .5), quantile(audit, .75));
      std::printf("%-28s %8.2f %8.2f %8.2f\n", "process (contained)", quantile(process, .25), quantile(process, .5),
                  quantile(process, .75));
      std::printf("%-28s %8.2f %8.2f %8.2f\n", "paired difference", quantile(diff, .25), quantile(diff, .5),
                  quantile(diff, .75));
      std::printf("%-28s %8.2f %8.2f %8.2f\n", "audit CPU (user+sys)", quantile(audit_cpu, .25),
                  quantile(audit_cpu, .5), quantile(audit_cpu, .75));
      std::printf("%-28s %8.2f %8.2f %8.2f\n", "process CPU (user+sys)", quantile(process_cpu, .25),
                  quantile(process_cpu, .5), quantile(process_cpu, .75));
      std::printf("median process - median audit: %.2f ms; ratio %.3f\n",
                  quantile(process, .5) - quantile(audit, .5), quantile(process, .5) / quantile(audit, .5));
    }
  }
  std::error_code ec;
  fs::remove_all(base, ec);
  return rc;
}
