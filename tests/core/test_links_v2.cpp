// Symbolic links as version-2 plan entries (docs/spec/dpp-general.md, "Plan";
// docs/spec/plans.md): the general test plugin's case "links" creates a link
// (in a folder apply creates, and one whose text holds terminal control
// bytes), replaces a file by a link, a link by a file and a link by another
// link (an existing, unmanaged link taken over), removes a link and leaves a
// link that already holds its text alone. The sealed plan records every link
// text (after and before), `plan` shows each link escaped, apply and
// rollback give exactly all-after and all-before (tree(): every link's text
// and owner), and the crash matrix kills apply, recover's rollback walk and
// `rollback` at every durable step, then recovers to one of the two trees.
// The crash instances are named MatrixV2/ and FaultsV2/ so CI repeats them.
#include <signal.h>

#include <cctype>

#include "dot/core/plan_v2.h"
#include "dot/core/test_hooks.h"
#include "dot/store/root.h"
#include "engine_harness.h"

namespace dot::core::testing {
namespace {

const std::string kControlText = "dangling \x1b[31mred\x1b[0m text";

class LinksV2Test : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    register_general_test_plugin();
    fs::create_symlink("old/text", root_ / "file-was-link");
    fs::create_symlink("/etc/passwd", root_ / "gone-link");
    spit(root_ / "link-was-file", "was a file\n", 0600);
    fs::create_symlink("first", root_ / "relink");
    fs::create_symlink("same", root_ / "same-link");
    spit(root_ / "keep.txt", "not in the plan\n", 0600);
    before_ = tree(root_);
    after_ = before_;
    const std::string owner = fmt::format("{}:{}", ::geteuid(), ::getegid());
    auto link = [&](const std::string& path, const std::string& text) {
      after_[path] = fmt::format("{:o}:{}->{}", S_IFLNK | 0777, owner, text);
    };
    after_["file-was-link"] = fmt::format("{:o}", S_IFREG | 0600) + ":" + sha256_hex("now a file\n");
    after_.erase("gone-link");
    link("link-was-file", "/absolute/target");
    after_["links.d"] = fmt::format("{:o}", S_IFDIR | 0700);
    link("links.d/new", "../file-was-link");
    link("new-link", kControlText);
    link("relink", "second");
  }

  CmdResult plan_links(bool json = true) {
    spit(base_ / "case", "links\n");
    std::vector<std::string> args = {"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"};
    if (json) args.push_back("--json");
    return core(args);
  }
  std::string plan_links_id() {
    CmdResult r = plan_links();
    EXPECT_EQ(r.code, 0) << r.err << r.out;
    return json_field(r.out, "plan_id");
  }
  PlanV2 sealed_plan(const std::string& id) {
    auto layout = store::RootLayout::for_root(root_.string());
    auto st = store::Store::open(layout.database, read_only());
    EXPECT_TRUE(st.ok());
    auto txn = st->find(id);
    EXPECT_TRUE(txn.ok());
    auto sealed = st->load_sealed(*txn);
    EXPECT_TRUE(sealed.ok()) << sealed.error().line();
    auto plan = decode_canonical_plan_v2(sealed->canonical_plan);
    EXPECT_TRUE(plan.ok()) << plan.error().line();
    return plan.ok() ? *plan : PlanV2{};
  }

  bool all_before() { return tree(root_) == before_; }
  bool all_after() { return tree(root_) == after_; }
  std::string differences(const std::map<std::string, std::string>& want) {
    const auto now = tree(root_);
    std::string out;
    for (const auto& [path, v] : now)
      if (!want.contains(path) || want.at(path) != v) out += " +" + path + "=" + v;
    for (const auto& [path, v] : want)
      if (!now.contains(path)) out += " -" + path;
    return out;
  }

  std::map<std::string, std::string> before_, after_;
};

// 6 operations (same-link is a no-op), 1 created folder (links.d), 2
// touched folders ("" and links.d, created).
PlanShape links_shape() {
  PlanShape s;
  s.folders = 1;
  s.writes = {true, false, true, true, true, true};
  s.existed = {true, true, true, false, false, true};
  s.touched = {false, true};
  s.effects = 1;
  return s;
}

TEST_F(LinksV2Test, TheSealedPlanRecordsEveryLinkTextAsAfterAndBefore) {
  const std::string id = plan_links_id();
  const PlanV2 plan = sealed_plan(id);
  EXPECT_EQ(plan_shape(plan), links_shape());
  ASSERT_EQ(plan.operations.size(), 6u);
  const auto& ops = plan.operations;
  EXPECT_EQ(ops[0].path, "file-was-link");
  EXPECT_EQ(ops[0].action, Action::Write);
  EXPECT_TRUE(ops[0].before.is_link());
  EXPECT_EQ(ops[0].before.link_text, "old/text");
  EXPECT_EQ(ops[0].after.kind, EntryKind::File);
  EXPECT_EQ(ops[1].action, Action::Remove);
  EXPECT_EQ(ops[1].before.link_text, "/etc/passwd");
  EXPECT_EQ(ops[2].action, Action::Link);
  EXPECT_EQ(ops[2].before.kind, EntryKind::File);
  EXPECT_EQ(ops[2].after.link_text, "/absolute/target");
  EXPECT_EQ(ops[3].path, "links.d/new");
  EXPECT_FALSE(ops[3].before.exists);
  EXPECT_EQ(ops[4].after.link_text, kControlText);
  EXPECT_EQ(ops[5].path, "relink");
  EXPECT_EQ(ops[5].before.link_text, "first");
  EXPECT_EQ(ops[5].after.link_text, "second");
  EXPECT_EQ(ops[5].after.sha256, sha256_hex("second"));
  EXPECT_EQ(ops[5].after.uid, ::geteuid());
  ASSERT_EQ(plan.directories.size(), 1u);
  EXPECT_EQ(plan.directories[0].path, "links.d");
  EXPECT_TRUE(all_before()) << differences(before_);
  EXPECT_EQ(store_problems(), "");
}

TEST_F(LinksV2Test, PlanShowsEachLinkOperationWithItsTextEscaped) {
  CmdResult r = plan_links(false);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  // Nothing here is managed yet: what exists is taken over, and said so.
  EXPECT_NE(r.out.find("take over file-was-link (exists, not managed yet): link -> \"old/text\" by file (mode 0600, "
                       "11 bytes)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("remove link gone-link -> \"/etc/passwd\"\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("take over link-was-file (exists, not managed yet): file (11 bytes, mode 0600) by link -> "
                       "\"/absolute/target\"\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("link links.d/new -> \"../file-was-link\"\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("take over relink (exists, not managed yet): link -> \"first\" by link -> \"second\"\n"),
            std::string::npos)
      << r.out;
  // The control bytes of a link's text reach the terminal escaped, never raw.
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("link new-link -> \"dangling \\x1b[31mred\\x1b[0m text\"\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("same-link"), std::string::npos) << "a no-op is not shown: " << r.out;
  // --json carries each link's text in its snapshots, JSON-escaped.
  CmdResult j = plan_links(true);
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(j.out.find('\x1b'), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"kind\":\"symlink\",\"link_text\":\"second\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"link_text\":\"dangling \\u001b[31mred\\u001b[0m text\""), std::string::npos) << j.out;
}

TEST_F(LinksV2Test, ApplyMakesEveryLinkAndRollbackRestoresEachExactly) {
  const std::string id = plan_links_id();
  CmdResult a = core({"apply", id});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_TRUE(all_after()) << differences(after_);
  EXPECT_EQ(state_of(id), "DONE");
  // Nothing was followed: the link to /etc/passwd went as itself.
  EXPECT_TRUE(fs::exists("/etc/passwd"));
  EXPECT_EQ(core({"status"}).code, 0);
  EXPECT_EQ(store_problems(), "");
  // A second plan of the same case changes nothing.
  CmdResult again = plan_links();
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(json_field(again.out, "state"), "NO_CHANGES") << again.out;
  CmdResult r = core({"rollback", id});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_TRUE(all_before()) << differences(before_);
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_EQ(store_problems(), "");
  expect_recover_is_a_noop();
}

TEST_F(LinksV2Test, StatusReportsALinkWhoseTextChangedAsDrift) {
  const std::string id = plan_links_id();
  ASSERT_EQ(core({"apply", id}).code, 0);
  fs::remove(root_ / "relink");
  fs::create_symlink("edited", root_ / "relink");
  CmdResult s = core({"status", "--json"});
  EXPECT_NE(s.out.find("relink"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(R"({"name":"relink","plan_id":")" + id + R"(","reason":"content"})"), std::string::npos)
      << s.out;
  // And rollback leaves the edited link as evidence.
  CmdResult r = core({"rollback", id});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("relink"), std::string::npos) << r.err;
  EXPECT_EQ(fs::read_symlink(root_ / "relink"), "edited");
}

// Between plan and apply a link's text changes, or a file becomes a link:
// STALE, nothing changed.
TEST_F(LinksV2Test, ALinkChangedSincePlanIsStaleAndNothingChanges) {
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which);
    const std::string id = plan_links_id();
    if (which == 0) {
      fs::remove(root_ / "relink");
      fs::create_symlink("third", root_ / "relink");
    } else {
      fs::remove(root_ / "link-was-file");
      fs::create_symlink("was a file\n", root_ / "link-was-file");
    }
    const auto drifted = tree(root_);
    CmdResult r = core({"apply", id});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err.rfind("DOT_E_CONFLICT: ", 0), 0u) << r.err;
    EXPECT_EQ(tree(root_), drifted);
    EXPECT_EQ(state_of(id), "STALE");
    // Back as it was for the next round.
    fs::remove(root_ / (which == 0 ? "relink" : "link-was-file"));
    if (which == 0) fs::create_symlink("first", root_ / "relink");
    if (which == 1) spit(root_ / "link-was-file", "was a file\n", 0600);
  }
  EXPECT_EQ(store_problems(), "");
}

// ---- the crash matrix ----------------------------------------------------

class LinksCrashTest : public LinksV2Test {
 protected:
  LinksCrashTest() { exe_ = kHookedCore; }

  void expect_recovered_cleanly(const std::string& id, const std::string& why) {
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << why << ": " << rec.err;
    const bool before = all_before(), after = all_after();
    EXPECT_TRUE(before || after) << why << ": neither all-before nor all-after; against before:" << differences(before_)
                                 << "; against after:" << differences(after_);
    EXPECT_EQ(state_of(id), after ? "DONE" : "ROLLED_BACK") << why;
    EXPECT_EQ(store_problems(), "") << why;
    expect_recover_is_a_noop(why);
  }
};

std::string point_name(const ::testing::TestParamInfo<std::string>& pinfo) {
  std::string n = pinfo.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

TEST_F(LinksCrashTest, TheMatrixCoversEveryLinkStep) {
  // store.prepare, 1 folder, 5 temps (file and links), syncfs, COMMITTING,
  // 6 operations, 2 folders, COMMITTED, 3 for the effect, DONE.
  EXPECT_EQ(apply_v2_crash_points(links_shape()).size(), 22u);
  // ROLLING_BACK, 4 temps (the file's backup, 3 links), syncfs, 6
  // operations, 1 folder removed, 1 touched folder left (""), ROLLED_BACK.
  EXPECT_EQ(rollback_v2_crash_points(links_shape()).size(), 15u);
}

class LinkApplyCrashPoint : public LinksCrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LinkApplyCrashPoint, RecoversToAllBeforeOrAllAfter) {
  const std::string id = plan_links_id();
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=" + GetParam()});
  ASSERT_EQ(crashed.signal, SIGKILL) << "did not stop at " << GetParam() << ": " << crashed.err;
  expect_recovered_cleanly(id, GetParam());
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, LinkApplyCrashPoint, ::testing::ValuesIn(apply_v2_crash_points(links_shape())),
                         point_name);

class LinkRecoverCrashPoint : public LinksCrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LinkRecoverCrashPoint, RecoversAgain) {
  const std::string id = plan_links_id();
  ASSERT_EQ(core({"apply", id}, {"DOT_TEST_CRASH_AT=apply.op5.renamed"}).signal, SIGKILL);
  CmdResult rec = core({"recover"}, {"DOT_TEST_CRASH_AT=" + GetParam()});
  ASSERT_EQ(rec.signal, SIGKILL) << "recover did not stop at " << GetParam() << ": " << rec.err;
  expect_recovered_cleanly(id, GetParam());
  EXPECT_TRUE(all_before()) << differences(before_);
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, LinkRecoverCrashPoint, ::testing::ValuesIn(rollback_v2_crash_points(links_shape())),
                         point_name);

class LinkRollbackCrashPoint : public LinksCrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LinkRollbackCrashPoint, RecoverFinishesTheRollback) {
  const std::string id = plan_links_id();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult crashed = core({"rollback", id}, {"DOT_TEST_CRASH_AT=" + GetParam()});
  ASSERT_EQ(crashed.signal, SIGKILL) << "rollback did not stop at " << GetParam() << ": " << crashed.err;
  expect_recovered_cleanly(id, GetParam());
  EXPECT_TRUE(all_before()) << differences(before_);
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, LinkRollbackCrashPoint, ::testing::ValuesIn(rollback_v2_crash_points(links_shape())),
                         point_name);

class LinkCommitFault : public LinksCrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LinkCommitFault, RollsBackWithDotECommit) {
  for (std::string err : {"ENOSPC", "EIO"}) {
    SCOPED_TRACE(err);
    const std::string id = plan_links_id();
    CmdResult r = core({"apply", id}, {"DOT_TEST_FAULT=" + GetParam() + ":" + err});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err.rfind("DOT_E_COMMIT: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(err), std::string::npos) << r.err;
    EXPECT_TRUE(all_before()) << differences(before_);
    EXPECT_EQ(state_of(id), "ROLLED_BACK");
    EXPECT_EQ(store_problems(), "");
    expect_recover_is_a_noop(err);
  }
}

INSTANTIATE_TEST_SUITE_P(FaultsV2, LinkCommitFault, ::testing::ValuesIn(commit_v2_fault_points(links_shape())),
                         point_name);

// A failed root-sync leaves the transaction COMMITTED; the retry re-syncs
// every target (a link has no data of its own: its folder's fsync, which
// follows, makes it durable) and every touched folder, each a crash point.
class LinkRetriedRootSyncPoint : public LinksCrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(LinkRetriedRootSyncPoint, FsyncsEveryTargetAndFolderThenTheRoot) {
  const std::string id = plan_links_id();
  CmdResult failed = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"});
  ASSERT_NE(failed.err.find("DOT_E_POST_COMMIT"), std::string::npos) << failed.err;
  EXPECT_TRUE(all_after()) << differences(after_);
  CmdResult crashed = core({"retry-effects"}, {"DOT_TEST_CRASH_AT=" + GetParam()});
  ASSERT_EQ(crashed.signal, SIGKILL) << "the retry did not reach " << GetParam() << ": " << crashed.err;
  expect_recovered_cleanly(id, GetParam());
  EXPECT_TRUE(all_after());
  EXPECT_EQ(ledger(id), "SUCCEEDED");
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, LinkRetriedRootSyncPoint, ::testing::ValuesIn(retried_effect_crash_points(6, 0, 2)),
                         point_name);

}  // namespace
}  // namespace dot::core::testing
