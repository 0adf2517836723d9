// The first hour with dot-core (docs/user-guide.md): typos get "did you
// mean", `help COMMAND` and `--version` answer like other tools, the managed
// root is found from the current directory. Every case runs the real
// dot-core with an exact environment and working directory.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dot/store/root.h"
#include "helpers.h"
#include "run_cli.h"

namespace dot::cli {
namespace {

using store::testing::RunResult;
using store::testing::slurp;
using store::testing::TempDir;

// dot-core with `args`, in `cwd`, with exactly `env` (plus PATH).
RunResult run_in(const std::string& cwd, std::vector<std::string> env, std::vector<std::string> args,
                 const std::string& scratch) {
  args.insert(args.begin(), store::testing::dot_core());
  env.push_back("PATH=/usr/bin:/bin");
  std::string out_path = scratch + "/stdout", err_path = scratch + "/stderr";
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> a, v;
    for (auto& s : args) a.push_back(s.data());
    for (auto& s : env) v.push_back(s.data());
    a.push_back(nullptr);
    v.push_back(nullptr);
    ::execve(a[0], a.data(), v.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

class Ux : public ::testing::Test {
 protected:
  RunResult run(std::vector<std::string> args) { return run_in(t.path(), {}, std::move(args), t.path()); }
  TempDir t;
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(Ux, MistypedCommandsAndOptionsGetDidYouMean) {
  struct Case {
    std::vector<std::string> args;
    std::string suggestion;
    std::string help;
  };
  const std::string root = t / "nowhere";
  const Case cases[] = {
      {{"plna"}, "did you mean 'plan'?", "run 'dot-core --help'"},
      {{"inspect", "lsit"}, "did you mean 'list'?", "run 'dot-core inspect --help'"},
      {{"plan", "--root", root, "--allow-audit"}, "did you mean '--allow-audit-plugin'?", "run 'dot-core plan --help'"},
      {{"plan", "--allow-audit=1", "--root", root}, "did you mean '--allow-audit-plugin'?", "run 'dot-core plan --help'"},
      {{"inspect", "list", "--root", root, "--jsno"}, "did you mean '--json'?", "run 'dot-core inspect list --help'"},
      {{"stauts"}, "did you mean 'status'?", "run 'dot-core --help'"},
      {{"help", "plna"}, "did you mean 'plan'?", "run 'dot-core --help'"},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    SCOPED_TRACE(c.args.back());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(has(r.err, c.suggestion)) << r.err;
    EXPECT_TRUE(has(r.err, c.help)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Nothing close: no guess, but still the help to read.
  auto far = run({"zzzzzzzz"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_FALSE(has(far.err, "did you mean")) << far.err;
  EXPECT_TRUE(has(far.err, "dot-core: unknown command 'zzzzzzzz'")) << far.err;
  // A word with terminal controls is shown escaped.
  auto esc = run({"\x1b[31mplan"});
  EXPECT_EQ(esc.exit_code, 2);
  EXPECT_FALSE(has(esc.err, "\x1b")) << esc.err;
}

TEST_F(Ux, HelpCommandAndVersionFlag) {
  auto help = run({"help", "plan"});
  auto direct = run({"plan", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out, direct.out);
  EXPECT_TRUE(has(help.out, "--allow-audit-plugin")) << help.out;
  auto nested = run({"help", "inspect", "list"});
  EXPECT_EQ(nested.exit_code, 0);
  EXPECT_EQ(nested.out, run({"inspect", "list", "--help"}).out);
  auto top = run({"help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_EQ(top.out, run({"--help"}).out);

  auto flag = run({"--version"});
  auto cmd = run({"version"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, cmd.out);
  EXPECT_EQ(flag.out.rfind("dot-core ", 0), 0u) << flag.out;
}

// A managed root at `dir` (created by the store, like `dot-core init`).
std::string make_root(const std::string& dir) {
  auto r = store::init_root(dir);
  EXPECT_TRUE(r.ok()) << r.error().line();
  return r.ok() ? r->layout.root : dir;
}

TEST_F(Ux, RootIsFoundFromTheCurrentDirectoryUp) {
  const std::string root = make_root(t / "r");
  std::filesystem::create_directories(root + "/a/b");
  auto r = run_in(root + "/a/b", {}, {"status"}, t.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "root     " + root + "\n")) << r.out;
  // In the root itself, and from inside its state folder.
  EXPECT_EQ(run_in(root, {}, {"inspect", "list"}, t.path()).exit_code, 0);
  EXPECT_EQ(run_in(root + "/.dot", {}, {"store", "check"}, t.path()).exit_code, 0);
  // An empty DOT_ROOT is unset.
  EXPECT_EQ(run_in(root + "/a", {"DOT_ROOT="}, {"status"}, t.path()).exit_code, 0);
}

TEST_F(Ux, RootOptionBeatsDotRootWhichBeatsTheWalk) {
  const std::string one = make_root(t / "one");
  const std::string two = make_root(t / "two");
  auto env = run_in(two, {"DOT_ROOT=" + one}, {"status"}, t.path());
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_TRUE(has(env.out, "root     " + one + "\n")) << env.out;
  auto opt = run_in(two, {"DOT_ROOT=" + one}, {"status", "--root", two}, t.path());
  EXPECT_EQ(opt.exit_code, 0) << opt.err;
  EXPECT_TRUE(has(opt.out, "root     " + two + "\n")) << opt.out;
  // A DOT_ROOT that is not a root is an error, never a reason to walk.
  auto bad = run_in(two, {"DOT_ROOT=" + t / "none"}, {"status"}, t.path());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err.rfind("DOT_E_STORE: ", 0), 0u) << bad.err;
}

TEST_F(Ux, NoRootFoundSaysHowToNameOne) {
  std::filesystem::create_directories(t / "plain/sub");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"status"}, {"inspect", "list"}, {"store", "check"}, {"recover"}, {"plan", "--allow-audit-plugin"}}) {
    auto r = run_in(t / "plain/sub", {}, args, t.path());
    SCOPED_TRACE(args.front());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "DOT_E_STORE: no managed root in " + t / "plain/sub" +
                         " or any parent; pass --root or set DOT_ROOT\n");
  }
}

TEST_F(Ux, SymlinkedStateFolderIsNotARoot) {
  const std::string root = make_root(t / "real");
  std::filesystem::create_directories(t / "fake/sub");
  ASSERT_EQ(::symlink((root + "/.dot").c_str(), (t / "fake/.dot").c_str()), 0);
  auto r = run_in(t / "fake/sub", {}, {"status"}, t.path());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has(r.err, "no managed root in " + t / "fake/sub")) << r.err;
  // A directory entered through a symlink is the directory itself: the walk
  // starts from the physical current directory (getcwd).
  ASSERT_EQ(::symlink(root.c_str(), (t / "fake/link").c_str()), 0);
  auto via = run_in(t / "fake/link", {}, {"status"}, t.path());
  EXPECT_EQ(via.exit_code, 0) << via.err;
  EXPECT_TRUE(has(via.out, "root     " + root + "\n")) << via.out;
}

TEST_F(Ux, InitNeedsANamedRoot) {
  std::filesystem::create_directories(t / "inside");
  auto bare = run_in(t / "inside", {}, {"init"}, t.path());
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_TRUE(has(bare.err, "--root DIR (or DOT_ROOT) is required")) << bare.err;
  EXPECT_TRUE(has(bare.err, "run 'dot-core init --help'")) << bare.err;
  EXPECT_FALSE(std::filesystem::exists(t / "inside/.dot"));
  auto env = run_in(t / "inside", {"DOT_ROOT=" + t / "new"}, {"init"}, t.path());
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_TRUE(std::filesystem::is_directory(t / "new/.dot"));
}

TEST_F(Ux, HintsNameTheRootTheyApplyTo) {
  const std::string spaced = make_root(t / "my root");
  auto plan = run_in(spaced, {}, {"plan", "--allow-audit-plugin"}, t.path());
  EXPECT_EQ(plan.exit_code, 1);
  // The hint is a whole command: what to run, not half of it.
  EXPECT_TRUE(has(plan.err, "run `dot-core register --root '" + spaced +
                                "' --plugin PATH --assurance audit|process` first"))
      << plan.err;
  const std::string quoted = make_root(t / "it's");
  auto status = run_in(quoted, {}, {"status"}, t.path());
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_TRUE(has(status.out, "run dot-core register --root '" + t / "it'\\''s" + "' --plugin")) << status.out;
  const std::string plain = make_root(t / "plain");
  auto p = run_in(plain, {}, {"status"}, t.path());
  EXPECT_TRUE(has(p.out, "run dot-core register --root " + plain + " --plugin")) << p.out;
}

}  // namespace
}  // namespace dot::cli
