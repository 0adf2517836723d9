// Store timings, measured side by side in one run (medians of interleaved
// runs; the machine is shared, so ratios matter more than absolute times).
//
//   bench_store record [ROUNDS]       seal() vs one fsync'd SQLite commit of the same bytes
//   bench_store populate ROOT N       a new root holding N sealed transactions
//   bench_store cli ROOT DOT_CORE [RUNS]
//                                     `dot-core inspect list --limit 50` and `inspect show`
//                                     as whole processes, against the populated root
//   bench_store show-once ROOT PREFIX one Store::open + find + detail + close in this
//                                     (fresh) process; prints its time in ms (cli runs it)
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dot/base/sha256.h"
#include "dot/store/root.h"
#include "dot/store/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using dot::store::Store;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_store: %s\n", what.c_str());
  std::exit(1);
}

template <typename R>
void must(const R& r, const char* what) {
  if (!r.ok()) die(fmt::format("{}: {}", what, r.error().line()));
}

// A hello-sized sealed plan: ~1.3 KiB of plan bytes and two small artifacts.
dot::store::SealInput plan_input(long n) {
  dot::store::SealInput in;
  in.proposal_id = dot::sha256_hex(fmt::format("proposal {}", n));
  std::string ops;
  const char* names[] = {"hello.txt", "welcome.txt"};
  for (int i = 0; i < 2; ++i) {
    dot::store::Blob a;
    a.slot = static_cast<std::uint32_t>(i);
    a.bytes = fmt::format("{} from plan {}\n", i ? "Welcome" : "Hello", n);
    a.sha256 = dot::sha256_hex(a.bytes);
    in.operations.push_back({names[i], "", a.sha256});
    in.artifacts.push_back(a);
    ops += fmt::format(
        "{}{{\"after\":{{\"exists\":true,\"gid\":0,\"mode\":384,\"sha256\":\"{}\",\"uid\":0}},"
        "\"before\":{{\"exists\":false,\"gid\":0,\"mode\":0,\"sha256\":\"\",\"uid\":0}},\"name\":\"{}\"}}",
        i ? "," : "", a.sha256, names[i]);
  }
  in.canonical_plan = fmt::format(
      "{{\"effects\":[{{\"failure_policy\":\"required\",\"kind\":\"sync\",\"target\":\"managed-root\"}}],"
      "\"nonce\":\"{}\",\"operations\":[{}],\"plugin_digest\":\"{}\",\"proposal_id\":\"{}\",\"root_id\":\"{}\","
      "\"version\":1}}",
      dot::sha256_hex(fmt::format("nonce {}", n)), ops, std::string(64, 'd'), in.proposal_id, std::string(64, 'a'));
  in.plan_id = dot::sha256_hex(in.canonical_plan);
  in.effect_count = 1;
  return in;
}

std::size_t input_bytes(const dot::store::SealInput& in) {
  std::size_t n = in.canonical_plan.size();
  for (const auto& a : in.artifacts) n += a.bytes.size();
  return n;
}

void exec_or_die(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) die(fmt::format("{}: {}", sql, err ? err : "?"));
}

int cmd_record(int rounds) {
  std::string dir = (std::filesystem::temp_directory_path() / fmt::format("bench-store-{}", ::getpid())).string();
  std::filesystem::create_directories(dir);
  auto store = Store::create(dir + "/store.db", std::string(64, 'a'));
  must(store, "create");
  // The floor: the same bytes as one row, one fsync'd commit, same pragmas.
  sqlite3* raw = nullptr;
  if (sqlite3_open((dir + "/floor.db").c_str(), &raw) != SQLITE_OK) die("open floor.db");
  exec_or_die(raw, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE t (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)");
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(raw, "INSERT INTO t (bytes) VALUES (?1)", -1, &ins, nullptr);

  std::vector<double> seal_ms, full_ms, floor_ms;
  std::size_t bytes = 0;
  for (int r = 0; r < rounds + 3; ++r) {  // 3 warm-up rounds
    auto in = plan_input(r);
    bytes = input_bytes(in);
    std::string blob(bytes, 'x');
    // Interleave the floor and the store so load changes hit both alike.
    auto t0 = Clock::now();
    exec_or_die(raw, "BEGIN");
    sqlite3_bind_blob(ins, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
    if (sqlite3_step(ins) != SQLITE_DONE) die("floor insert");
    sqlite3_reset(ins);
    exec_or_die(raw, "COMMIT");
    double f = ms_since(t0);

    auto t1 = Clock::now();
    auto id = store->begin_proposal({"org.dot.hello", std::string(64, 'd'), 0});
    must(id, "begin_proposal");
    auto t2 = Clock::now();
    must(store->seal(*id, in), "seal");
    double s = ms_since(t2);
    double whole = ms_since(t1);
    if (r >= 3) {
      floor_ms.push_back(f);
      seal_ms.push_back(s);
      full_ms.push_back(whole);
    }
  }
  sqlite3_finalize(ins);
  sqlite3_close(raw);
  std::filesystem::remove_all(dir);
  double fl = median(floor_ms), se = median(seal_ms), fu = median(full_ms);
  std::printf("record: %d rounds, %zu bytes per plan (plan + artifacts)\n", rounds, bytes);
  std::printf("  floor: one fsync'd SQLite commit of %zu bytes   median %.3f ms\n", bytes, fl);
  std::printf("  seal(): sealed plan, 2 operations, 2 artifacts, event   median %.3f ms  ratio %.2fx\n", se, se / fl);
  std::printf("  begin_proposal() + seal() (two commits)             median %.3f ms  ratio %.2fx\n", fu, fu / fl);
  return 0;
}

// Writes the rows seal() and the later transitions write, in bulk (one SQLite
// transaction) so 100,000 transactions take seconds, not the hours of one
// fsync per commit. States follow a realistic mix: mostly DONE.
int cmd_populate(const std::string& root, long n) {
  auto init = dot::store::init_root(root);
  must(init, "init");
  sqlite3* db = nullptr;
  if (sqlite3_open(init->layout.database.c_str(), &db) != SQLITE_OK) die("open");
  exec_or_die(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; BEGIN");
  auto prep = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) die(sql);
    return s;
  };
  sqlite3_stmt* txn = prep(
      "INSERT INTO txn (id, state, plugin_id, plugin_digest, proposal_id, plan_id, created_at_ms, updated_at_ms, "
      "finished_at_ms, operation_count) VALUES (?1, ?2, 'org.dot.hello', ?3, ?4, ?5, ?6, ?6, ?6, 2)");
  sqlite3_stmt* plan = prep("INSERT INTO plan (txn_id, canonical, sealed_at_ms, effect_count) VALUES (?1, ?2, ?3, 1)");
  sqlite3_stmt* op = prep("INSERT INTO operation VALUES (?1, ?2, ?3, '', ?4)");
  sqlite3_stmt* art = prep("INSERT INTO artifact VALUES (?1, ?2, ?3, ?4)");
  sqlite3_stmt* ev = prep("INSERT INTO event (txn_id, state, at_ms) VALUES (?1, ?2, ?3)");
  sqlite3_stmt* eff = prep("INSERT INTO effect VALUES (?1, 0, 'SUCCEEDED', ?2, 1, ?3, NULL, NULL)");
  sqlite3_stmt* bak = prep("INSERT INTO backup VALUES (?1, ?2, 0, CAST('' AS BLOB), '')");
  auto step = [&](sqlite3_stmt* s) {
    if (sqlite3_step(s) != SQLITE_DONE) die(sqlite3_errmsg(db));
    sqlite3_reset(s);
  };
  std::string digest(64, 'd');
  long long t0 = dot::store::now_ms() - n * 1000LL;
  for (long i = 1; i <= n; ++i) {
    auto in = plan_input(i);
    bool done = i % 10 != 0;  // every tenth stays SEALED
    long long at = t0 + i * 1000LL;
    sqlite3_bind_int64(txn, 1, i);
    sqlite3_bind_text(txn, 2, done ? "DONE" : "SEALED", -1, SQLITE_STATIC);
    sqlite3_bind_text(txn, 3, digest.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(txn, 4, in.proposal_id.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(txn, 5, in.plan_id.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(txn, 6, at);
    step(txn);
    sqlite3_bind_int64(plan, 1, i);
    sqlite3_bind_blob(plan, 2, in.canonical_plan.data(), static_cast<int>(in.canonical_plan.size()), SQLITE_STATIC);
    sqlite3_bind_int64(plan, 3, at);
    step(plan);
    for (int s = 0; s < 2; ++s) {
      const auto& a = in.artifacts[static_cast<std::size_t>(s)];
      sqlite3_bind_int64(op, 1, i);
      sqlite3_bind_int(op, 2, s);
      sqlite3_bind_text(op, 3, in.operations[static_cast<std::size_t>(s)].name.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(op, 4, a.sha256.c_str(), -1, SQLITE_STATIC);
      step(op);
      sqlite3_bind_int64(art, 1, i);
      sqlite3_bind_int(art, 2, s);
      sqlite3_bind_blob(art, 3, a.bytes.data(), static_cast<int>(a.bytes.size()), SQLITE_STATIC);
      sqlite3_bind_text(art, 4, a.sha256.c_str(), -1, SQLITE_STATIC);
      step(art);
      if (done) {
        sqlite3_bind_int64(bak, 1, i);
        sqlite3_bind_int(bak, 2, s);
        step(bak);
      }
    }
    const char* hist_done[] = {"PROPOSING", "SEALED", "PREPARED", "COMMITTING", "COMMITTED", "DONE"};
    const char* hist_sealed[] = {"PROPOSING", "SEALED"};
    const char** hist = done ? hist_done : hist_sealed;
    int len = done ? 6 : 2;
    for (int k = 0; k < len; ++k) {
      sqlite3_bind_int64(ev, 1, i);
      sqlite3_bind_text(ev, 2, hist[k], -1, SQLITE_STATIC);
      sqlite3_bind_int64(ev, 3, at + k);
      step(ev);
    }
    if (done) {
      std::string key = dot::store::effect_idempotency_key(in.plan_id, 0);
      sqlite3_bind_int64(eff, 1, i);
      sqlite3_bind_text(eff, 2, key.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(eff, 3, at);
      step(eff);
    }
  }
  for (auto* s : {txn, plan, op, art, ev, eff, bak}) sqlite3_finalize(s);
  exec_or_die(db, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE);");
  sqlite3_close(db);
  auto check = Store::open(init->layout.database);
  must(check, "reopen");
  auto count = check->count();
  must(count, "count");
  auto last = check->summary(n / 2);
  must(last, "summary");
  std::printf("populated %s: %zu transactions; a plan id in the middle: %s\n", root.c_str(), *count,
              last->plan_id.c_str());
  return 0;
}

struct ProcTime {
  double wall_ms;
  double cpu_ms;  // user + system time of the child: what load does not inflate
  double faults;  // minor page faults of the child: what load does not change at all
  std::string out;  // the child's standard output, when captured
};

ProcTime time_process(const std::vector<std::string>& argv, bool capture = false) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  int pipe_fds[2] = {-1, -1};
  if (capture) {
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) die("pipe");
    ::posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 1);
  } else {
    ::posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  }
  // posix_spawn (clone with CLONE_VM|CLONE_VFORK in glibc), not fork: a
  // forked copy of this process's address space would be torn down by the
  // child's exec and charged to it, inflating every figure by the harness's
  // own size rather than the command's.
  auto t0 = Clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) die(fmt::format("cannot spawn {}: {}", argv[0], std::strerror(rc)));
  std::string out;
  if (capture) {
    ::close(pipe_fds[1]);
    char buf[256];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
  }
  int status = 0;
  struct rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  double ms = ms_since(t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die(fmt::format("{} failed", fmt::join(argv, " ")));
  auto tv_ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1000.0 + tv.tv_usec / 1000.0; };
  return {ms, tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime), static_cast<double>(ru.ru_minflt), std::move(out)};
}

// What `inspect show PREFIX` asks of the store: open, resolve the prefix,
// read the whole detail (plan verified against its id, blobs against their
// digests), close.
void show_in_process(const std::string& database, const dot::store::OpenOptions& o, const std::string& prefix) {
  auto s = Store::open(database, o);
  must(s, "open");
  auto id = s->find(prefix);
  must(id, "find");
  auto d = s->detail(*id);
  must(d, "detail");
}

// One open + find + detail + close, timed inside a fresh process: the store
// work with everything a short-lived command pays on first use (SQLite's code
// and heap pages faulted in, its schema parsed), unlike the warm loop above.
int cmd_show_once(const std::string& root, const std::string& prefix) {
  auto layout = dot::store::RootLayout::for_root(root);
  dot::store::OpenOptions o;
  o.read_only = true;
  auto t0 = Clock::now();
  show_in_process(layout.database, o, prefix);
  std::printf("%.6f\n", ms_since(t0));
  return 0;
}

int cmd_cli(const std::string& root, const std::string& dot_core, int runs) {
  auto layout = dot::store::RootLayout::for_root(root);
  std::string prefix;
  std::size_t count = 0;
  {
    dot::store::OpenOptions o;
    o.read_only = true;
    auto s = Store::open(layout.database, o);
    must(s, "open");
    auto c = s->count();
    must(c, "count");
    count = *c;
    auto mid = s->summary(static_cast<dot::store::TxnId>(count / 2));
    must(mid, "summary");
    prefix = mid->plan_id.substr(0, 12);
  }
  // The same work in-process (open read-only, query, close): what the store
  // itself costs, without process start-up and dynamic linking.
  std::vector<double> api_list_ms, api_show_ms;
  for (int r = 0; r < runs * 10; ++r) {
    dot::store::OpenOptions o;
    o.read_only = true;
    auto t0 = Clock::now();
    {
      auto s = Store::open(layout.database, o);
      must(s, "open");
      auto rows = s->list({std::nullopt, 50});
      must(rows, "list");
      if (rows->size() != 50) die("list returned fewer rows");
    }
    api_list_ms.push_back(ms_since(t0));
    auto t1 = Clock::now();
    show_in_process(layout.database, o, prefix);
    api_show_ms.push_back(ms_since(t1));
  }
  std::printf("api: %zu stored transactions, %d runs, open + query + close in-process\n", count, runs * 10);
  std::printf("  Store::open + list(limit 50)                median %.3f ms\n", median(api_list_ms));
  std::printf("  Store::open + find(prefix) + detail         median %.3f ms\n", median(api_show_ms));
  std::vector<double> cold_show_ms;
  for (int r = 0; r < runs + 2; ++r) {
    ProcTime t = time_process({"/proc/self/exe", "show-once", root, prefix}, true);
    if (r >= 2) cold_show_ms.push_back(std::atof(t.out.c_str()));
  }
  std::printf("  the same, first call in a fresh process     median %.3f ms\n", median(cold_show_ms));

  struct Case {
    const char* label;
    std::vector<std::string> argv;
    std::vector<double> wall, cpu, faults;
  };
  // The start-up floors sit next to dot-core in the build (bench/store/CMakeLists.txt).
  const std::string bin_dir = dot_core.substr(0, dot_core.rfind('/') + 1);
  std::vector<Case> cases = {
      {"/bin/true (spawn + exec + wait floor)", {"/bin/true", "true"}, {}, {}, {}},
      {"startup-floor-c (empty, libc only)", {bin_dir + "startup-floor-c"}, {}, {}, {}},
      {"startup-floor-cxx (empty, + libstdc++, simdjson)", {bin_dir + "startup-floor-cxx"}, {}, {}, {}},
      {"dot-core version (dot-core start-up floor)", {dot_core, "version"}, {}, {}, {}},
      {"inspect list --limit 50", {dot_core, "inspect", "list", "--root", root, "--limit", "50"}, {}, {}, {}},
      {"inspect list --limit 50 --json", {dot_core, "inspect", "list", "--root", root, "--limit", "50", "--json"}, {}, {}, {}},
      {"inspect show PREFIX", {dot_core, "inspect", "show", "--root", root, prefix}, {}, {}, {}},
      {"inspect show PREFIX --json", {dot_core, "inspect", "show", "--root", root, prefix, "--json"}, {}, {}, {}},
  };
  // The reference point of docs/PERFORMANCE.md: the sqlite3 shell answering
  // the same questions on the same database, read-only, in the same run.
  // show: find the transaction by plan-id prefix, then its summary, detail,
  // operations, effect ledger and events (what `inspect show` reads); list:
  // the 50 newest summaries.
  const std::string db = layout.database;
  const std::string lo = prefix, hi = prefix + "g";  // every id with the prefix sorts in [lo, hi)
  const std::string show_sql =
      "CREATE TEMP TABLE hit AS SELECT id FROM txn WHERE plan_id >= '" + lo + "' AND plan_id < '" + hi +
      "' LIMIT 2;"
      "SELECT txn.*, plan.* FROM txn LEFT JOIN plan ON plan.txn_id = txn.id WHERE txn.id IN (SELECT id FROM hit);"
      "SELECT slot, name, before_sha256, after_sha256 FROM operation WHERE txn_id IN (SELECT id FROM hit) ORDER BY slot;"
      "SELECT * FROM effect WHERE txn_id IN (SELECT id FROM hit) ORDER BY idx;"
      "SELECT seq, state, at_ms, code, detail FROM event WHERE txn_id IN (SELECT id FROM hit) ORDER BY seq;";
  const std::string list_sql =
      "SELECT txn.id, txn.state, txn.plan_id, txn.proposal_id, txn.plugin_id, txn.created_at_ms, txn.updated_at_ms, "
      "txn.error_code, txn.operation_count, plan.effect_count FROM txn LEFT JOIN plan ON plan.txn_id = txn.id "
      "ORDER BY txn.id DESC LIMIT 50;";
  cases.push_back({"sqlite3 -readonly: the show queries", {"/usr/bin/sqlite3", "-readonly", db, show_sql}, {}, {}, {}});
  cases.push_back({"sqlite3 -readonly: the list query", {"/usr/bin/sqlite3", "-readonly", db, list_sql}, {}, {}, {}});
  for (int r = 0; r < runs + 2; ++r) {
    for (auto& c : cases) {
      ProcTime t = time_process(c.argv);
      if (r < 2) continue;  // warm-up
      c.wall.push_back(t.wall_ms);
      c.cpu.push_back(t.cpu_ms);
      c.faults.push_back(t.faults);
    }
  }
  std::printf("cli: %zu stored transactions, %d interleaved runs, whole processes (show PREFIX = %s)\n", count, runs,
              prefix.c_str());
  std::printf("  %-50s %12s %12s %7s\n", "", "wall median", "cpu median", "faults");
  for (const auto& c : cases)
    std::printf("  %-50s %9.3f ms %9.3f ms %7.0f\n", c.label, median(c.wall), median(c.cpu), median(c.faults));
  // The ratios the targets are stated in (docs/PERFORMANCE.md), from the
  // medians of this one interleaved run.
  auto wall = [&](std::string_view label) {
    for (const auto& c : cases)
      if (label == c.label) return median(c.wall);
    die("no such case");
  };
  std::printf("ratios (wall medians, this run)\n");
  std::printf("  dot-core version / /bin/true                        %.2fx (target <= 3)\n",
              wall("dot-core version (dot-core start-up floor)") / wall("/bin/true (spawn + exec + wait floor)"));
  std::printf("  inspect show / sqlite3 show queries                 %.2fx (target <= 1.5)\n",
              wall("inspect show PREFIX") / wall("sqlite3 -readonly: the show queries"));
  std::printf("  inspect list --limit 50 / sqlite3 list query        %.2fx (target <= 1.5)\n",
              wall("inspect list --limit 50") / wall("sqlite3 -readonly: the list query"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (!a.empty() && a[0] == "record") return cmd_record(a.size() > 1 ? std::atoi(a[1].c_str()) : 200);
  if (a.size() == 3 && a[0] == "populate") return cmd_populate(a[1], std::atol(a[2].c_str()));
  if (a.size() >= 3 && a[0] == "cli") return cmd_cli(a[1], a[2], a.size() > 3 ? std::atoi(a[3].c_str()) : 30);
  if (a.size() == 3 && a[0] == "show-once") return cmd_show_once(a[1], a[2]);
  std::fprintf(stderr,
               "usage: bench_store record [ROUNDS]\n"
               "       bench_store populate ROOT N\n"
               "       bench_store cli ROOT DOT_CORE [RUNS]\n"
               "       bench_store show-once ROOT PREFIX\n");
  return 2;
}
