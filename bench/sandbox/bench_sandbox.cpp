// Containment overhead at the mechanism level. The plugin is the sandbox
// probe (C++, libstdc++ + libcrypto, like a real plugin) doing nothing, or
// /bin/true when the tests were not built. End-to-end `plan` timings, side by
// side with audit, are bench/sandbox/plan_vs_audit.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/filter.h>

#include <string>
#include <vector>

#include "dot/base/fd.h"
#include "dot/base/process.h"
#include "dot/base/sandbox.h"
// Internal to dot_base (base/src): included to time the filter's build alone.
#include "sandbox_seccomp.h"

namespace {

std::string plugin_path() {
  std::string probe = std::string(DOT_BIN_DIR) + "/sandbox-probe";
  struct stat st;
  return ::stat(probe.c_str(), &st) == 0 ? probe : "/bin/true";
}

struct Fixture {
  std::string path = plugin_path();
  dot::UniqueFd exe{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  std::string stage;
  dot::UniqueFd stage_fd;
  Fixture() {
    char tmpl[] = "/tmp/dot-bench-sandbox-XXXXXX";
    stage = ::mkdtemp(tmpl);
    stage_fd.reset(::open(stage.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~Fixture() { ::rmdir(stage.c_str()); }
  dot::SandboxPolicy policy() const {
    dot::SandboxPolicy p;
    p.executable_fd = exe.get();
    p.executable_path = path;
    p.stage_fd = stage_fd.get();
    return p;
  }
  dot::SpawnOptions spawn_options() const {
    dot::SpawnOptions o;
    o.exec_fd = exe.get();
    o.argv = {"plugin", "none"};
    o.env = {"LANG=C", "DOT_STAGE_ROOT=" + stage};
    o.cwd = stage;
    o.stdin_mode = o.stdout_mode = o.stderr_mode = dot::StdioMode::DevNull;
    return o;
  }
};

void BM_ProbeSupport(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(dot::probe_sandbox_support());
}
BENCHMARK(BM_ProbeSupport);

void BM_ResolveLoaderFiles(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) benchmark::DoNotOptimize(dot::resolve_loader_files(f.exe.get(), f.path));
}
BENCHMARK(BM_ResolveLoaderFiles);

void BM_BuildSeccompFilter(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(dot::sandbox_detail::build_seccomp_filter());
}
BENCHMARK(BM_BuildSeccompFilter);

void BM_Prepare(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    auto sb = dot::Sandbox::prepare(f.policy());
    if (!sb.ok()) state.SkipWithError(sb.error().line().c_str());
    benchmark::DoNotOptimize(sb);
  }
}
BENCHMARK(BM_Prepare);

void run_once(benchmark::State& state, const Fixture& f, bool contained) {
  dot::SpawnOptions o = f.spawn_options();
  std::optional<dot::Sandbox> sb;
  if (contained) {
    auto prepared = dot::Sandbox::prepare(f.policy());
    if (!prepared.ok()) {
      state.SkipWithError(prepared.error().line().c_str());
      return;
    }
    sb = std::move(prepared).value();
    (void)sb->apply_to(o);
  }
  auto child = dot::spawn(o);
  if (!child.ok()) {
    state.SkipWithError(child.error().line().c_str());
    return;
  }
  auto st = child->wait_until(dot::Clock::now() + std::chrono::seconds(5));
  if (!st || !st->success()) state.SkipWithError("plugin failed");
}

void BM_SpawnExit(benchmark::State& state) {
  Fixture f;
  const bool contained = state.range(0) != 0;
  for (auto _ : state) run_once(state, f, contained);
  state.SetLabel(contained ? "contained (prepare + spawn + exit)" : "uncontained (spawn + exit)");
}
BENCHMARK(BM_SpawnExit)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
