// Printed bytes cannot be turned against the user: whatever a plugin puts in
// its artifacts, its stderr or its error messages, and whatever a stored row
// holds, human output shows every control as \xNN (dot/base/utf8.h
// append_shown, through cli/output.h) and --json output is JSON.
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "engine_harness.h"
#include "hostile_bytes.h"

namespace dot::core::testing {
namespace {

using dot::testing::kHostileText;
using dot::testing::raw_control;

// The controls of kHostileText as the escaper shows them.
constexpr std::string_view kShownText = "\\x1b[2K\\x1b[1Aerased\\x0dCR\\x08BS\\x7f \\x1b]52;c;ZXZpbA==\\x07 osc \\xc2\\x9b31mC1";

class Escaping : public EngineTest {
 protected:
  void use_plugin(const std::string& which) {
    CmdResult reg = core({"register", "--plugin", bin("cli-hostile-" + which), "--assurance", "audit", "--replace"});
    ASSERT_EQ(reg.code, 0) << reg.err;
  }
  // The operation object of `name` in a plan --json document.
  std::optional<json::Value> operation(const json::Document& doc, std::string_view name) {
    auto ops = doc.root().find("operations");
    if (!ops) return std::nullopt;
    for (json::Value op : ops->elements())
      if (op.find("name") && op.find("name")->as_string() == name) return op;
    return std::nullopt;
  }
  // Runs SQL against the root's database directly (a forged row).
  void forge(const std::string& sql, const std::string& bytes) {
    sqlite3* db = nullptr;
    auto layout = store::RootLayout::for_root(root_.string());
    ASSERT_EQ(sqlite3_open(layout.database.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_bind_text(st, 1, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
};

TEST_F(Escaping, PlanShowsTheDiffWithEveryControlEscaped) {
  use_plugin("text");
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(raw_control(r.out), "");
  EXPECT_EQ(raw_control(r.err), "");
  EXPECT_NE(r.out.find("+" + std::string(kShownText) + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+end\n"), std::string::npos) << r.out;
}

// dot-core with its standard output on a pseudo-terminal in raw mode (bytes
// arrive as written) and stdin/stderr on /dev/null: what the terminal got.
// The read ends with EIO once the last holder of the terminal has exited,
// so there is no timing in it.
CmdResult on_terminal(std::vector<std::string> args, std::vector<std::string> env) {
  CmdResult r;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return r;
  int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  termios tio{};
  if (slave < 0 || ::tcgetattr(slave, &tio) != 0) return r;
  ::cfmakeraw(&tio);
  ::tcsetattr(slave, TCSANOW, &tio);
  args.insert(args.begin(), bin(kProductCore));
  env.insert(env.end(), {"LANG=C", "PATH=/usr/bin:/bin"});
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(slave, 1);
    ::dup2(null, 2);
    std::vector<char*> a, e;
    for (auto& x : args) a.push_back(x.data());
    for (auto& x : env) e.push_back(x.data());
    a.push_back(nullptr);
    e.push_back(nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  ::close(slave);
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0)
      r.out.append(buf, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(master);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `text` without the colour codes dot-core itself adds (cli/style.cpp).
std::string without_our_colours(std::string text) {
  for (std::string_view sgr : {"\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[0m"})
    for (auto at = text.find(sgr); at != std::string::npos; at = text.find(sgr)) text.erase(at, sgr.size());
  return text;
}

TEST_F(Escaping, PlanColoursTheDiffOnATerminalOnlyAfterEscaping) {
  use_plugin("text");
  CmdResult r = on_terminal({"plan", "--allow-audit-plugin", "--root", root_.string()}, {"TERM=xterm"});
  ASSERT_EQ(r.code, 0) << r.out;
  // The plugin's line, escaped, inside our green.
  EXPECT_NE(r.out.find("\x1b[32m+" + std::string(kShownText) + "\x1b[0m\n"), std::string::npos) << shown(r.out);
  EXPECT_NE(r.out.find("\x1b[32m+end\x1b[0m\n"), std::string::npos) << shown(r.out);
  // File headers stay plain; nothing but our own codes reaches the terminal.
  EXPECT_EQ(r.out.find("\x1b[31m---"), std::string::npos) << shown(r.out);
  EXPECT_EQ(raw_control(without_our_colours(r.out)), "");
}

TEST_F(Escaping, NoColourWithNoColorOrADumbTerminalOrAPipe) {
  use_plugin("text");
  CmdResult no_color = on_terminal({"plan", "--allow-audit-plugin", "--root", root_.string()}, {"TERM=xterm", "NO_COLOR=1"});
  ASSERT_EQ(no_color.code, 0) << no_color.out;
  EXPECT_NE(no_color.out.find("+" + std::string(kShownText) + "\n"), std::string::npos) << shown(no_color.out);
  EXPECT_EQ(raw_control(no_color.out), "");
  CmdResult dumb = on_terminal({"inspect", "list", "--root", root_.string()}, {"TERM=dumb"});
  ASSERT_EQ(dumb.code, 0) << dumb.out;
  EXPECT_NE(dumb.out.find("SEALED"), std::string::npos) << dumb.out;
  EXPECT_EQ(raw_control(dumb.out), "");
  CmdResult piped = core({"inspect", "list"}, {"TERM=xterm"});
  EXPECT_NE(piped.out.find("SEALED"), std::string::npos) << piped.out;
  EXPECT_EQ(raw_control(piped.out), "");
  CmdResult coloured = on_terminal({"inspect", "list", "--root", root_.string()}, {"TERM=xterm"});
  EXPECT_NE(coloured.out.find("\x1b[33mSEALED\x1b[0m"), std::string::npos) << shown(coloured.out);
}

TEST_F(Escaping, PagerGetsTheEscapedTextOnlyWhenAskedAndOnATerminal) {
  use_plugin("text");
  const std::string paged = (base_ / "paged").string();
  CmdResult r = on_terminal({"plan", "--allow-audit-plugin", "--pager", "--root", root_.string()},
                            {"TERM=xterm", "PAGER=cat > '" + paged + "'"});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "") << "the pager had the text, not the terminal";
  std::string got = slurp(paged);
  EXPECT_NE(got.find("\x1b[32m+" + std::string(kShownText) + "\x1b[0m\n"), std::string::npos) << shown(got);
  EXPECT_NE(got.find("apply it with: dot-core apply --root "), std::string::npos) << shown(got);
  EXPECT_EQ(raw_control(without_our_colours(got)), "");
  fs::remove(paged);
  // Not a terminal: no pager, whatever --pager says.
  CmdResult piped = core({"plan", "--allow-audit-plugin", "--pager"}, {"PAGER=cat > '" + paged + "'"});
  EXPECT_EQ(piped.code, 0) << piped.err;
  EXPECT_FALSE(fs::exists(paged));
  EXPECT_NE(piped.out.find("apply it with:"), std::string::npos) << piped.out;
  // Not asked: no pager on a terminal either.
  CmdResult unasked = on_terminal({"inspect", "list", "--root", root_.string()},
                                  {"TERM=xterm", "PAGER=cat > '" + paged + "'"});
  EXPECT_FALSE(fs::exists(paged));
  EXPECT_NE(unasked.out.find("SEALED"), std::string::npos);
}

TEST_F(Escaping, PlanJsonCarriesTheArtifactBytesExactly) {
  use_plugin("text");
  CmdResult r = core({"plan", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << doc.error().line() << "\n" << r.out;
  auto op = operation(*doc, "hello.txt");
  ASSERT_TRUE(op);
  ASSERT_TRUE(op->find("binary") && op->find("diff")) << r.out;
  EXPECT_FALSE(op->find("binary")->as_bool());
  EXPECT_NE(std::string(op->find("diff")->as_string()).find("+" + std::string(kHostileText) + "\n"), std::string::npos);
}

TEST_F(Escaping, PlanJsonOfBytesThatAreNotUtf8IsSealedAndSaysSo) {
  use_plugin("binary");
  CmdResult r = core({"plan", "--allow-audit-plugin", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << doc.error().line() << "\n" << r.out;
  auto op = operation(*doc, "hello.txt");
  auto other = operation(*doc, "welcome.txt");
  ASSERT_TRUE(op && other);
  ASSERT_TRUE(op->find("binary") && op->find("diff") && other->find("binary") && other->find("diff")) << r.out;
  EXPECT_TRUE(op->find("binary")->as_bool());
  EXPECT_TRUE(op->find("diff")->is_null());
  EXPECT_FALSE(other->find("binary")->as_bool());
  EXPECT_TRUE(other->find("diff")->is_string());
  std::string plan_id(doc->root().find("plan_id")->as_string());
  EXPECT_EQ(state_of(plan_id), "SEALED");
}

TEST_F(Escaping, PlanShowsBytesThatAreNotUtf8) {
  use_plugin("binary");
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(raw_control(r.out), "");
  EXPECT_NE(r.out.find("+" + std::string(kShownText) + "\\xff\\xfe\n"), std::string::npos) << r.out;
}

TEST_F(Escaping, APluginsErrorMessageIsOneEscapedLine) {
  use_plugin("error");
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_PROTOCOL: ", 0), 0u) << r.err;
  EXPECT_EQ(raw_control(r.err), "");
  EXPECT_NE(r.err.find(kShownText), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  // --json: the error object carries the plugin's words exactly.
  CmdResult j = core({"plan", "--allow-audit-plugin", "--json"});
  EXPECT_EQ(j.code, 1);
  auto doc = json::parse(j.out);
  ASSERT_TRUE(doc.ok()) << doc.error().line() << "\n" << j.out;
  ASSERT_TRUE(doc->root().find("error") && doc->root().find("error")->find("detail")) << j.out;
  std::string detail(doc->root().find("error")->find("detail")->as_string());
  EXPECT_NE(detail.find(kHostileText), std::string::npos) << detail;
  EXPECT_EQ(raw_control(j.err), "");
}

// dpp conform quotes the plugin's error message in its case lines and in
// its error line: each escaped on its line; --json carries the words exactly.
TEST_F(Escaping, DppConformShowsThePluginsWordsEscaped) {
  const std::vector<std::string> args = {"dpp", "conform", "--profile", "org.dot.hello/v1", "--case", "lifecycle",
                                         "--", bin("cli-hostile-error")};
  CmdResult r = run_core(exe_, args);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(raw_control(r.out), "");
  EXPECT_EQ(raw_control(r.err), "");
  EXPECT_NE(r.out.find("  FAIL lifecycle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kShownText), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(kShownText), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.begin() + 2, "--json");
  CmdResult j = run_core(exe_, json_args);
  EXPECT_EQ(j.code, 1);
  auto doc = json::parse(j.out);
  ASSERT_TRUE(doc.ok()) << j.out;
  std::string quoted;
  append_json_string(quoted, kHostileText);
  EXPECT_NE(j.out.find(quoted.substr(1, quoted.size() - 2)), std::string::npos) << j.out;
}

TEST_F(Escaping, InspectShowsStoredStderrEscapedAndJsonRepaired) {
  use_plugin("text");
  std::string id = plan_ok();
  ASSERT_EQ(id.size(), 64u);
  CmdResult show = core({"inspect", "show", id});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_EQ(raw_control(show.out), "");
  EXPECT_NE(show.out.find("plugin says " + std::string(kShownText) + " \\xff"), std::string::npos) << show.out;
  CmdResult js = core({"inspect", "show", id, "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  auto doc = json::parse(js.out);
  ASSERT_TRUE(doc.ok()) << doc.error().line();
  ASSERT_TRUE(doc->root().find("plugin_stderr")) << js.out;
  EXPECT_EQ(doc->root().find("plugin_stderr")->as_string(), utf8_repaired(dot::testing::hostile_stderr()));
}

// Rows nobody checked on the way in (a forged or corrupt database): every
// string a command prints from the store is escaped, every JSON stays JSON.
TEST_F(Escaping, ForgedRowsAreShownEscaped) {
  use_plugin("text");
  std::string id = plan_ok();
  const std::string evil = std::string(kHostileText) + "\n\xff";
  forge("UPDATE operation SET name = ?1", evil);
  forge("UPDATE event SET detail = ?1, code = ?1", evil);
  forge("UPDATE txn SET plugin_id = ?1, error_code = ?1, error_detail = ?1", evil);
  for (std::vector<std::string> args : {std::vector<std::string>{"inspect", "show", id}, {"inspect", "events", id},
                                        {"inspect", "list"}, {"status"}}) {
    std::string what = args[0] + " " + (args.size() > 1 ? args[1] : "");
    CmdResult human = core(args);
    EXPECT_EQ(raw_control(human.out), "") << what;
    EXPECT_EQ(raw_control(human.err), "") << what;
    args.push_back("--json");
    CmdResult js = core(args);
    EXPECT_EQ(raw_control(js.err), "") << what;
    if (js.code == 0) {
      auto doc = json::parse(js.out);
      EXPECT_TRUE(doc.ok()) << what << ": " << (doc.ok() ? "" : doc.error().line()) << "\n" << js.out;
    }
  }
  CmdResult show = core({"inspect", "show", id});
  if (show.code == 0) {
    // A stored name or detail is one line: its newline cannot start a forged one.
    EXPECT_NE(show.out.find(std::string(kShownText) + "\\x0a\\xff"), std::string::npos) << show.out;
  }
}

}  // namespace
}  // namespace dot::core::testing
