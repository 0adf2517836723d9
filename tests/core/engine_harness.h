#pragma once
// Shared fixture of the engine tests: a fresh managed root with the built
// dot-hello registered, and a runner for the real dot-core binary.

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dot/base/json.h"
#include "dot/base/sha256.h"
#include "dot/base/process.h"
#include "dot/core/applier.h"
#include "dot/store/root.h"
#include "dot/store/store.h"

namespace dot::core::testing {

namespace fs = std::filesystem;

struct CmdResult {
  int code = -1;
  int signal = 0;
  std::string out;
  std::string err;
};

inline std::string bin(const std::string& name) { return std::string(DOT_BIN_DIR) + "/" + name; }

// The product front end, and the test-only engine with the crash, fault and
// pause points compiled in (core/include/dot/core/test_hooks.h): only the
// latter obeys DOT_TEST_*.
inline const std::string kProductCore = "dot-core";
inline const std::string kHookedCore = "dot-core-hooked";

// Runs `exe` (from the build's bin folder) with an exact environment (plus
// `env`); at most 60 s. `while_running`, if given, is called with its pid once the process
// is started, before its output is read (a test that paused it at a
// DOT_TEST_PAUSE_AT point acts there).
inline CmdResult run_core(const std::string& exe, const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {},
                          const std::function<void(pid_t)>& while_running = {}) {
  SpawnOptions o;
  o.path = bin(exe);
  o.argv = {exe};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"LANG=C", "PATH=/usr/bin:/bin"};
  o.env.insert(o.env.end(), env.begin(), env.end());
  o.stdin_mode = StdioMode::DevNull;
  CmdResult r;
  auto child = spawn(o);
  if (!child.ok()) {
    r.err = child.error().line();
    return r;
  }
  if (while_running) while_running(child->pid());
  auto out = read_all(child->stdout_fd().get(), 16 << 20);
  auto err = read_all(child->stderr_fd().get(), 16 << 20);
  r.out = out.ok() ? *out : "";
  r.err = err.ok() ? *err : "";
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(60));
  if (!st) st = child->kill_and_reap();
  r.code = st->code;
  r.signal = st->signal;
  return r;
}

inline CmdResult dot_core(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  return run_core(kProductCore, args, env);
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void spit(const fs::path& p, const std::string& bytes, mode_t mode = 0600) {
  { std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes; }
  ::chmod(p.c_str(), mode);
}

// Every entry beneath the root but the state folder: path -> type and mode
// (st_mode in octal) and, for a regular file, the SHA-256 of its bytes, for a
// symlink its owner and text. What
// "nothing written", "all before" and "all after" are checked against.
inline std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    // Lexically: relative() would resolve a symlink to where it points.
    const auto rel = it->path().lexically_relative(root).string();
    if (rel == ".dot") {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    std::string v = fmt::format("{:o}", st.st_mode);
    if (S_ISREG(st.st_mode)) v += ":" + sha256_hex(slurp(it->path()));
    if (S_ISLNK(st.st_mode)) v += fmt::format(":{}:{}->{}", st.st_uid, st.st_gid, fs::read_symlink(it->path()).string());
    out[rel] = v;
  }
  return out;
}

// The value of a top-level string field of a JSON object text.
inline std::string json_field(const std::string& text, const std::string& field) {
  auto doc = json::parse(text);
  if (!doc.ok()) return "<not json: " + text + ">";
  auto v = doc->root().find(field);
  if (!v || !v->is_string()) return "<no " + field + ">";
  return std::string(v->as_string());
}

inline store::OpenOptions read_only() {
  store::OpenOptions o;
  o.read_only = true;
  return o;
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dot-engine-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    root_ = base_ / "root";
    auto init = store::init_root(root_.string());
    ASSERT_TRUE(init.ok()) << init.error().line();
    auto reg = dot_core({"register", "--root", root_.string(), "--plugin", bin("dot-hello"), "--assurance", "audit"});
    ASSERT_EQ(reg.code, 0) << reg.err;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  CmdResult core(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.push_back("--root");
    args.push_back(root_.string());
    return run_core(exe_, args, env);
  }
  // The general-profile test plugin (tests/core/general_plugin.cpp) as a
  // second plugin of the root, id org.test.gplan.
  void register_general_test_plugin() {
    auto reg = core({"register", "--plugin", bin("core-general-plugin"), "--assurance", "audit", "--id",
                     "org.test.gplan", "--profile", "org.dot.dpp/v1"});
    ASSERT_EQ(reg.code, 0) << reg.err;
  }
  // `recover` has nothing left to do.
  void expect_recover_is_a_noop(const std::string& why = {}) {
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << why << ": " << rec.err;
    EXPECT_NE(rec.out.find("\"changed\":false"), std::string::npos) << why << ": " << rec.out;
  }
  // Plans with dot-hello and returns the plan id (fails the test otherwise).
  std::string plan_ok() {
    CmdResult r = core({"plan", "--allow-audit-plugin", "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return json_field(r.out, "plan_id");
  }
  std::string state_of(const std::string& plan_id) {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    if (!st.ok()) return st.error().line();
    auto id = st->find(plan_id);
    if (!id.ok()) return id.error().line();
    auto s = st->summary(*id);
    return s.ok() ? std::string(store::state_name(s->state)) : s.error().line();
  }
  std::string last_state() {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    if (!st.ok()) return st.error().line();
    auto l = st->list(store::ListFilter{std::nullopt, 1});
    if (!l.ok() || l->empty()) return "<none>";
    return std::string(store::state_name(l->front().state));
  }
  // Names of every temp file left beside the targets.
  std::vector<std::string> temp_files() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(root_))
      if (e.path().filename().string().rfind(".dot-tmp-", 0) == 0) out.push_back(e.path().filename());
    return out;
  }
  std::vector<std::string> stage_leftovers() {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root_ / ".dot" / "stage", ec)) out.push_back(e.path().filename());
    return out;
  }
  // store check, through the library: every invariant holds, every stored
  // plan's included (judged by core, as `dot-core store check` does).
  std::string store_problems() {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    if (!st.ok()) return st.error().line();
    auto report = st->check(judge_sealed_plan);
    if (!report.ok()) return report.error().line();
    std::string out;
    for (const auto& p : report->problems) out += p + "\n";
    return out;
  }
  // `store check --json` finds exactly one problem, naming the plan
  // `plan_id` and containing `names`: the forgery tests make every other row
  // they touch consistent, so only the plan check may see the forgery.
  void expect_only_store_problem(const std::string& plan_id, const std::string& names) {
    CmdResult r = core({"store", "check", "--json"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    auto doc = json::parse(r.out);
    ASSERT_TRUE(doc.ok()) << r.out;
    auto problems = doc->root().find("problems");
    ASSERT_TRUE(problems && problems->is_array()) << r.out;
    ASSERT_EQ(problems->size(), 1u) << r.out;
    std::string problem(std::string((*problems->elements().begin()).as_string()));
    EXPECT_NE(problem.find(plan_id), std::string::npos) << problem;
    EXPECT_NE(problem.find(names), std::string::npos) << problem;
  }
  // The ledger states of a plan's effects ("SUCCEEDED,..."), through the library.
  std::string ledger(const std::string& plan_id) {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    if (!st.ok()) return st.error().line();
    auto id = st->find(plan_id);
    if (!id.ok()) return id.error().line();
    auto effects = st->effects(*id);
    if (!effects.ok()) return effects.error().line();
    std::string out;
    for (const auto& e : *effects) out += std::string(out.empty() ? "" : ",") + std::string(store::effect_state_name(e.state));
    return out;
  }
  std::string hello() { return slurp(root_ / "hello.txt"); }
  std::string welcome() { return slurp(root_ / "welcome.txt"); }

  fs::path base_, root_;
  // What core() runs: the product, or kHookedCore for the tests that arm hooks.
  std::string exe_ = kProductCore;
};

// A COMMITTED plan of `plugin_id` writing `paths`, put through the store as
// the version-2 applier commits one (the plan row is not a decodable plan):
// what path ownership is derived from. Returns the transaction id.
inline store::TxnId seed_committed_plan(store::Store& st, const std::string& plugin_id,
                                        const std::vector<std::string>& paths) {
  auto id = st.begin_proposal({plugin_id, std::string(64, 'd'), 0});
  EXPECT_TRUE(id.ok()) << id.error().line();
  store::SealInput in;
  std::vector<store::Blob> backups;
  for (const auto& path : paths) {
    store::Blob a;
    a.slot = static_cast<std::uint32_t>(in.artifacts.size());
    a.bytes = path + " content\n";
    a.sha256 = sha256_hex(a.bytes);
    in.operations.push_back({path, "", a.sha256});
    in.artifacts.push_back(a);
    store::Blob absent;
    absent.slot = a.slot;
    absent.exists = false;
    backups.push_back(absent);
  }
  in.canonical_plan = "{\"ownership\":\"test\"}";
  in.plan_id = sha256_hex(in.canonical_plan);
  in.proposal_id = sha256_hex("proposal");
  EXPECT_TRUE(st.set_proposal_id(*id, in.proposal_id).ok());
  EXPECT_TRUE(st.seal(*id, in).ok());
  EXPECT_TRUE(st.prepare(*id, backups).ok());
  EXPECT_TRUE(st.transition(*id, store::State::Committing).ok());
  return *id;
}

}  // namespace dot::core::testing
