// `dot-core plan` for the general profile org.dot.dpp/v1 (docs/spec/dpp-general.md
// "Plan", "Materialize and validate", "Plan model and ids", dot.log, error
// responses), end to end through the product binary with the test plugin
// core-general-plugin (general_plugin.cpp): a plan that seals (nested paths,
// a UTF-8 name, modes, a created folder, a remove, a no-op left out),
// NO_CHANGES, and one hostile case per rejection at plan level, each with
// its code, nothing written beneath the root, an ABANDONED row and no
// plugin process left.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "../common/process_gone.h"
#include "dot/base/sha256.h"
#include "engine_harness.h"

namespace dot::core::testing {
namespace {

std::vector<json::Value> items(json::Value v) {
  std::vector<json::Value> out;
  for (json::Value e : v.elements()) out.push_back(e);
  return out;
}

class GeneralPlan : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    register_general_test_plugin();
  }

  CmdResult plan_case(const std::string& name, std::vector<std::string> extra = {}) {
    spit(base_ / "case", name + "\n");
    std::error_code ec;
    fs::remove(base_ / "pid", ec);
    std::vector<std::string> args = {"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return core(args);
  }

  pid_t plugin_pid() {
    std::string s = slurp(base_ / "pid");
    return s.empty() ? 0 : static_cast<pid_t>(std::stol(s));
  }

  store::TxnDetail last_detail() {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    EXPECT_TRUE(st.ok());
    auto l = st->list(store::ListFilter{std::nullopt, 1});
    EXPECT_TRUE(l.ok() && !l->empty());
    auto d = st->detail(l->front().id);
    EXPECT_TRUE(d.ok());
    return d.ok() ? *d : store::TxnDetail{};
  }

  // The root the seal case plans against: a file to edit, one to remove,
  // one already as proposed (a no-op), one more (a folder with a file).
  void seal_fixture() {
    spit(root_ / "conf.txt", "key = old\nother = 1\n", 0600);
    spit(root_ / "old.txt", "remove me\n", 0644);
    spit(root_ / "same.txt", "unchanged\n", 0644);
    fs::create_directory(root_ / "dir");
    ::chmod((root_ / "dir").c_str(), 0700);
  }
};

TEST_F(GeneralPlan, SealsAVersion2PlanWithFoldersModesARemoveAndNoOpsLeftOut) {
  seal_fixture();
  const auto before = tree(root_);
  CmdResult r = plan_case("seal");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(tree(root_), before) << "plan wrote beneath the root";
  EXPECT_TRUE(process_gone(plugin_pid()));
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  auto root = doc->root();
  EXPECT_EQ(root.find("state")->as_string(), "SEALED");
  EXPECT_EQ(root.find("version")->number_text(), "2");
  const std::string plan_id(root.find("plan_id")->as_string());
  // Created folders: dir exists, dir/sub and bin do not.
  auto dirs = items(*root.find("directories"));
  std::vector<std::string> folders;
  for (auto d : dirs) folders.emplace_back(d.find("path")->as_string());
  EXPECT_EQ(folders, (std::vector<std::string>{"bin", "dir/sub"}));
  // Operations in path order without the no-op same.txt.
  std::vector<std::string> paths, actions;
  for (auto op : items(*root.find("operations"))) {
    paths.emplace_back(op.find("path")->as_string());
    actions.emplace_back(op.find("action")->as_string());
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"bin/tool", "conf.txt", "dir/sub/\xc3\xbc" "ber.txt", "old.txt"}));
  EXPECT_EQ(actions, (std::vector<std::string>{"write", "write", "write", "remove"}));
  auto ops = items(*root.find("operations"));
  // bin/tool is binary: no diff; conf.txt a text diff with its mode change.
  EXPECT_TRUE(ops[0].find("binary")->as_bool());
  EXPECT_TRUE(ops[0].find("diff")->is_null());
  const std::string diff(ops[1].find("diff")->as_string());
  EXPECT_NE(diff.find("-key = old\n+key = new\n"), std::string::npos) << diff;
  // The log, exact in --json, in order, with the method it came during.
  auto logs = items(*root.find("logs"));
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[1].find("message")->as_string(), "escape \x1b[31mred\x1b[0m and a\nnew line");
  EXPECT_EQ(logs[1].find("method")->as_string(), "dot.plan");

  // Stored: SEALED, the proposal document (no-op included) and the log;
  // store check streams the files and judges the plan.
  auto d = last_detail();
  EXPECT_EQ(d.summary.state, store::State::Sealed);
  EXPECT_EQ(d.summary.plan_id, plan_id);
  EXPECT_NE(d.proposal_document.find("same.txt"), std::string::npos);
  EXPECT_EQ(d.canonical_plan.find("same.txt"), std::string::npos);
  EXPECT_EQ(d.logs.size(), 2u);
  EXPECT_EQ(store_problems(), "");
  auto check = core({"store", "check", "--json"});
  EXPECT_EQ(check.code, 0) << check.out << check.err;

  // plan-id of what export writes recomputes the same id (both versions).
  auto exported = core({"export", plan_id.substr(0, 12)});
  ASSERT_EQ(exported.code, 0) << exported.err;
  spit(base_ / "exported.json", exported.out);
  auto id = run_core(kProductCore, {"plan-id", (base_ / "exported.json").string()});
  EXPECT_EQ(id.code, 0) << id.err;
  EXPECT_EQ(id.out, plan_id + "\n");

  // Human output: the log escaped, never raw, in inspect show and events.
  auto show = core({"inspect", "show", plan_id.substr(0, 12)});
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("escape \\x1b[31mred\\x1b[0m and a\\x0anew line"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find('\x1b'), std::string::npos);
  // The operations table stays aligned past the UTF-8 name: its AFTER
  // column starts at the same column (code points) on every row.
  {
    const auto table = show.out.substr(show.out.find("\noperations\n") + 12);
    std::set<std::size_t> after_columns;
    std::size_t at = 0;
    for (int row = 0; row < 5; ++row) {
      const std::size_t end = table.find('\n', at);
      const std::string line = table.substr(at, end - at);
      std::size_t cols = 0, last_gap = 0;
      for (std::size_t i = 0; i < line.size(); ++i) {
        if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
        if (i >= 2 && line[i] != ' ' && line[i - 1] == ' ' && line[i - 2] == ' ') last_gap = cols;
        ++cols;
      }
      after_columns.insert(last_gap);
      at = end + 1;
    }
    EXPECT_EQ(after_columns.size(), 1u) << table;
  }
  auto events = core({"inspect", "events", plan_id.substr(0, 12)});
  EXPECT_NE(events.out.find("proposing 5 operations"), std::string::npos) << events.out;

  // And it applies (test_apply_v2.cpp covers apply, rollback and recover).
  auto apply = core({"apply", plan_id.substr(0, 12)});
  EXPECT_EQ(apply.code, 0) << apply.err;
  EXPECT_EQ(slurp(root_ / "dir" / "sub" / "\xc3\xbc" "ber.txt"), "gr\xc3\xbc\xc3\x9f dich\n");
  EXPECT_FALSE(fs::exists(root_ / "old.txt"));
  EXPECT_EQ(state_of(plan_id), "DONE");
}

TEST_F(GeneralPlan, HumanOutputShowsDiffsSummariesFoldersAndVerboseLogs) {
  seal_fixture();
  spit(base_ / "case", "seal\n");
  CmdResult r = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin", "--verbose"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("create folder bin/ (mode 0700)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("create folder dir/sub/ (mode 0700)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("binary or large bin/tool"), std::string::npos) << r.out;
  // conf.txt exists and no plugin manages it: the plan takes it over.
  EXPECT_NE(r.out.find("take over conf.txt (exists, not managed yet): mode 0600 -> 0644, "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("+key = new"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("create dir/sub/\xc3\xbc" "ber.txt (mode 0600"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("remove old.txt"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("same.txt"), std::string::npos) << r.out;
  // --verbose: the log on stderr as it arrives, escaped.
  EXPECT_NE(r.err.find("log warning during dot.plan: escape \\x1b[31mred"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

TEST_F(GeneralPlan, EveryOperationANoOpIsNoChanges) {
  spit(root_ / "same.txt", "unchanged\n", 0644);
  const auto before = tree(root_);
  CmdResult r = plan_case("noop");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json_field(r.out, "state"), "NO_CHANGES");
  auto human = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"});
  EXPECT_EQ(human.code, 0);
  EXPECT_EQ(human.out.rfind("no changes", 0), 0u) << human.out;
  EXPECT_EQ(tree(root_), before);
  auto d = last_detail();
  EXPECT_EQ(d.summary.state, store::State::Abandoned);
  EXPECT_EQ(d.summary.code, store::kNoChangesCode);
  EXPECT_FALSE(d.proposal_document.empty());
  EXPECT_EQ(store_problems(), "");
}

TEST_F(GeneralPlan, OwnedPathsAreManagedAndAnotherPluginsPathsAreRefusedWithTheProposalKept) {
  // The hello plugin's applied plan owns hello.txt and welcome.txt.
  CmdResult sealed = core({"plan", "--plugin", "org.dot.hello", "--allow-audit-plugin", "--json"});
  ASSERT_EQ(sealed.code, 0) << sealed.err;
  CmdResult applied = core({"apply", json_field(sealed.out, "plan_id")});
  ASSERT_EQ(applied.code, 0) << applied.err;
  // A later committed plan of org.test.gplan, written through the store as
  // the version-2 applier commits one, takes b/x.conf and welcome.txt.
  {
    auto root = Root::open(root_.string(), Access::Mutating);
    ASSERT_TRUE(root.ok()) << root.error().line();
    store::Store& st = root->store();
    const store::TxnId id = seed_committed_plan(st, "org.test.gplan", {"b/x.conf", "welcome.txt"});
    ASSERT_TRUE(st.transition(id, store::State::Committed).ok());
    ASSERT_TRUE(st.transition(id, store::State::Done).ok());
  }
  const auto before = tree(root_);

  // The general plugin is handed what it owns, in UTF-8 byte order.
  CmdResult own = plan_case("noop");
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_EQ(slurp(base_ / "managed"), "b/x.conf\nwelcome.txt\n");

  // It may not write what the hello plugin owns: refused naming the owner,
  // with the proposal kept for `inspect show`.
  CmdResult theirs = plan_case("hello_owned");
  EXPECT_EQ(theirs.code, 1) << theirs.out;
  EXPECT_EQ(theirs.err.rfind("DOT_E_POLICY:", 0), 0u) << theirs.err;
  EXPECT_NE(theirs.err.find("path \"hello.txt\" is owned by plugin org.dot.hello"), std::string::npos) << theirs.err;
  auto d = last_detail();
  EXPECT_EQ(d.summary.state, store::State::Abandoned);
  EXPECT_NE(d.proposal_document.find("hello.txt"), std::string::npos) << d.proposal_document;
  EXPECT_EQ(tree(root_), before);
  EXPECT_TRUE(process_gone(plugin_pid()));

  // And the hello plugin may not replace what the general plugin owns.
  CmdResult hello = core({"plan", "--plugin", "org.dot.hello", "--allow-audit-plugin", "--json"});
  EXPECT_EQ(hello.code, 1) << hello.out;
  EXPECT_EQ(hello.err.rfind("DOT_E_POLICY:", 0), 0u) << hello.err;
  EXPECT_NE(hello.err.find("path \"welcome.txt\" is owned by plugin org.test.gplan"), std::string::npos)
      << hello.err;
  EXPECT_EQ(tree(root_), before);
  // (No store check: the seeded plan row is not a decodable plan.)
}

struct Hostile {
  const char* name;
  const char* code;
  const char* detail;  // a substring of the error line
  bool proposal;       // the proposal document is stored (the plan result passed)
};

// One per rejection the spec puts at plan level.
const Hostile kHostile[] = {
    {"unsorted", "DOT_E_POLICY", "ascending UTF-8 byte order", false},
    {"duplicate", "DOT_E_POLICY", "appears twice", false},
    {"parent_of", "DOT_E_POLICY", "is a parent folder of", false},
    {"dot_dot", "DOT_E_PATH_ESCAPE", "\"..\"", false},
    {"absolute", "DOT_E_PATH_ESCAPE", "absolute", false},
    {"nul", "DOT_E_POLICY", "control byte 0x00", false},
    {"control", "DOT_E_POLICY", "control byte 0x1b", false},
    {"not_utf8", "DOT_E_PROTOCOL", "", false},
    {"component_too_long", "DOT_E_POLICY", "component longer than 255", false},
    {"path_too_long", "DOT_E_POLICY", "longer than 4095", false},
    {"state_folder", "DOT_E_PATH_ESCAPE", "state folder", false},
    {"reserved_temp", "DOT_E_PATH_ESCAPE", "has the component \".dot-tmp-0123456789abcdef0123456789abcdef\"", false},
    {"reserved_temp_nested", "DOT_E_PATH_ESCAPE", "has the component \".dot-tmp-0123456789abcdef0123456789abcdef\"",
     false},
    {"reserved_reference", "DOT_E_PATH_ESCAPE", "has the component \".dot-history\"", false},
    {"bad_mode", "DOT_E_POLICY", "mode", false},
    {"symlinked_parent", "DOT_E_PATH_ESCAPE", "symlink", false},
    {"link_nul", "DOT_E_POLICY", "link_text holds a NUL byte", false},
    {"link_too_long", "DOT_E_POLICY", "link_text has 4096 bytes, more than 4095", false},
    {"link_empty", "DOT_E_POLICY", "empty link_text", false},
    {"link_symlinked_parent", "DOT_E_PATH_ESCAPE", "symlink", false},
    {"link_with_mode", "DOT_E_POLICY", "is a link with mode 420, not 0", false},
    {"write_with_link_text", "DOT_E_POLICY", "is a write with a link_text", false},
    {"target_folder", "DOT_E_POLICY", "is a folder", false},
    {"file_over_max", "DOT_E_PROTOCOL", "max_file_bytes", true},
    {"total_over_max", "DOT_E_PROTOCOL", "max_total_bytes", true},
    {"extra_file", "DOT_E_ARTIFACT_MISMATCH", "no artifact names", true},
    {"staged_symlink", "DOT_E_PATH_ESCAPE", "symlink", true},
    {"staged_symlink_folder", "DOT_E_PATH_ESCAPE", "elsewhere", true},
    {"hard_link", "DOT_E_ARTIFACT_MISMATCH", "hard links", true},
    {"wrong_digest", "DOT_E_ARTIFACT_MISMATCH", "sha256", true},
    {"wrong_size", "DOT_E_ARTIFACT_MISMATCH", "bytes but the plugin claimed", true},
    {"error_response", "DOT_E_PLUGIN_ERROR", "with error -32001: no source folder", false},
    {"handler_error", "DOT_E_PLUGIN_ERROR", "with error -32000", false},
};

TEST_F(GeneralPlan, EveryPlanLevelRejectionHasItsCodeAndWritesNothing) {
  // What the path cases meet beneath the root.
  fs::create_directory(base_ / "elsewhere");
  fs::create_directory_symlink(base_ / "elsewhere", root_ / "link");
  fs::create_directory(root_ / "folder");
  ::chmod((root_ / "folder").c_str(), 0700);
  const auto before = tree(root_);
  for (const Hostile& h : kHostile) {
    SCOPED_TRACE(h.name);
    CmdResult r = plan_case(h.name);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(r.err.rfind(std::string(h.code) + ":", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(h.detail), std::string::npos) << r.err;
    EXPECT_EQ(tree(root_), before) << "written beneath the root";
    EXPECT_TRUE(fs::is_empty(base_ / "elsewhere"));
    const pid_t pid = plugin_pid();
    EXPECT_GT(pid, 0);
    EXPECT_TRUE(process_gone(pid)) << "plugin " << pid << " left running";
    EXPECT_TRUE(stage_leftovers().empty());
    auto d = last_detail();
    EXPECT_EQ(d.summary.state, store::State::Abandoned);
    EXPECT_EQ(d.summary.code, h.code);
    EXPECT_EQ(!d.proposal_document.empty(), h.proposal) << d.proposal_document.substr(0, 200);
    if (std::string_view(h.name) == "error_response") {
      // The plugin's code, message and data are kept.
      EXPECT_NE(d.detail.find("with error -32001: no source folder"), std::string::npos) << d.detail;
      EXPECT_NE(d.detail.find("{\"missing\":\"/src\"}"), std::string::npos) << d.detail;
    }
  }
  EXPECT_EQ(store_problems(), "");
}

// Declared digests (docs/spec/dpp-general.md, "Declared digests"): core
// asks to stage only the writes that change something, and refuses a stage
// that holds anything else or other bytes than declared, sealing nothing.
TEST_F(GeneralPlan, DeclaredDigestsStageOnlyWhatChangesAndANoChangePlanAsksForNothing) {
  spit(root_ / "same.txt", "unchanged\n", 0644);
  const auto before = tree(root_);
  CmdResult noop = plan_case("cas_noop");
  ASSERT_EQ(noop.code, 0) << noop.err;
  EXPECT_EQ(json_field(noop.out, "state"), "NO_CHANGES");
  EXPECT_EQ(slurp(base_ / "asked"), "");
  EXPECT_EQ(tree(root_), before);

  CmdResult sealed = plan_case("cas_seal");
  ASSERT_EQ(sealed.code, 0) << sealed.err;
  EXPECT_EQ(slurp(base_ / "asked"), "new.txt\n");
  auto d = last_detail();
  EXPECT_EQ(d.summary.state, store::State::Sealed);
  // The proposal document binds both declared afters, the unchanged one too.
  EXPECT_NE(d.proposal_document.find(sha256_hex("unchanged\n")), std::string::npos);
  EXPECT_NE(d.proposal_document.find(sha256_hex("new\n")), std::string::npos);
  auto doc = json::parse(sealed.out);
  ASSERT_TRUE(doc.ok());
  auto ops = items(*doc->root().find("operations"));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].find("path")->as_string(), "new.txt");
  CmdResult applied = core({"apply", std::string(json_field(sealed.out, "plan_id"))});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(slurp(root_ / "new.txt"), "new\n");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(GeneralPlan, AStageThatIsNotExactlyWhatWasAskedAndDeclaredIsRefusedWithNothingSealed) {
  spit(root_ / "same.txt", "unchanged\n", 0644);
  const auto before = tree(root_);
  const Hostile cases[] = {
      {"cas_unasked_artifact", "DOT_E_ARTIFACT_MISMATCH", "", true},
      {"cas_unasked_file", "DOT_E_ARTIFACT_MISMATCH", "same.txt", true},
      {"cas_other_bytes", "DOT_E_ARTIFACT_MISMATCH", "but dot.plan declared", true},
      {"cas_claim_declared_stage_other", "DOT_E_ARTIFACT_MISMATCH", "new.txt", true},
  };
  for (const Hostile& h : cases) {
    SCOPED_TRACE(h.name);
    CmdResult r = plan_case(h.name);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(r.err.rfind(std::string(h.code) + ":", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(h.detail), std::string::npos) << r.err;
    EXPECT_EQ(slurp(base_ / "asked"), "new.txt\n");
    EXPECT_EQ(tree(root_), before) << "written beneath the root";
    const pid_t pid = plugin_pid();
    EXPECT_GT(pid, 0);
    EXPECT_TRUE(process_gone(pid)) << "plugin " << pid << " left running";
    EXPECT_TRUE(stage_leftovers().empty());
    auto d = last_detail();
    EXPECT_EQ(d.summary.state, store::State::Abandoned);
    EXPECT_EQ(d.summary.code, h.code);
  }
  EXPECT_EQ(store_problems(), "");
}

// Both answers of a plan of 3,000 declared writes come in batches (the
// runtime sends more than 1024 elements as batches of 1024): core judges
// each claim as its batch arrives, without keeping the list, and a claim
// out of place or other than its declaration in a later part is refused
// like one in the first, with nothing sealed.
TEST_F(GeneralPlan, ClaimsThatComeInBatchesAreEachHeldToTheirWrite) {
  CmdResult sealed = plan_case("cas_many");
  ASSERT_EQ(sealed.code, 0) << sealed.err;
  const std::string asked = slurp(base_ / "asked");
  EXPECT_EQ(std::count(asked.begin(), asked.end(), '\n'), 3000);
  auto doc = json::parse(sealed.out);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(items(*doc->root().find("operations")).size(), 3000u);
  EXPECT_EQ(last_detail().summary.state, store::State::Sealed);
  ASSERT_EQ(core({"discard", std::string(json_field(sealed.out, "plan_id"))}).code, 0);

  const auto before = tree(root_);
  struct Lie {
    const char* name;
    std::string detail;
  };
  const Lie cases[] = {
      {"cas_many_late_lie", "the artifact of \"many/f2500\" claims 6 bytes with SHA-256 " + sha256_hex("other\n") +
                                ", but dot.plan declared 20 bytes with SHA-256 " +
                                sha256_hex("bytes of many/f2500\n")},
      {"cas_many_swapped", "artifact \"many/f3501\" where the write of \"many/f3500\" comes (operation order)"},
  };
  for (const Lie& h : cases) {
    SCOPED_TRACE(h.name);
    CmdResult r = plan_case(h.name);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(r.err.rfind("DOT_E_ARTIFACT_MISMATCH:", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(h.detail), std::string::npos) << r.err;
    EXPECT_EQ(tree(root_), before) << "written beneath the root";
    EXPECT_TRUE(stage_leftovers().empty());
    auto d = last_detail();
    EXPECT_EQ(d.summary.state, store::State::Abandoned);
    EXPECT_EQ(d.summary.code, "DOT_E_ARTIFACT_MISMATCH");
  }
  EXPECT_EQ(store_problems(), "");
}

}  // namespace
}  // namespace dot::core::testing
