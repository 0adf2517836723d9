// Printed bytes cannot be turned against the user: whatever a plugin puts in
// its artifacts, its stderr or its error messages, and whatever a stored row
// holds, human output shows every control as \xNN (dot/base/utf8.h
// append_shown, through cli/output.h) and --json output is JSON.
#include <sqlite3.h>

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
