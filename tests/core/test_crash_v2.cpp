// The crash matrix of version-2 plans (docs/spec/transactions.md "Crash points",
// docs/spec/dpp-general.md "Apply, rollback, recover"), in the style of
// test_crash.cpp, over the fixture plan of apply_v2_fixture.h (writes,
// removes and four created folders in several nested folders): SIGKILL at
// every durable step of apply, of the rollback walk recover runs and of the
// `rollback` command, then `recover`: the root is exactly all-before or
// all-after (every file, mode and folder: tree()), the state says which,
// `store check` is clean, a second `recover` changes nothing. ENOSPC and EIO
// at every commit step: DOT_E_COMMIT naming the errno, rolled back, all
// before. CI repeats the MatrixV2/ and FaultsV2/ instances (.ci/run).
#include <signal.h>

#include <cctype>

#include "apply_v2_fixture.h"
#include "dot/core/test_hooks.h"
#include "dot/store/root.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

// The shape of the fixture plan (checked against the stored plan below):
// 9 operations, 4 created folders (bin, deep, deep/er, etc/app/new.d), 7
// touched folders ("", bin, deep, deep/er, etc, etc/app, etc/app/new.d), the
// created ones marked.
PlanShape fixture_shape() {
  PlanShape s;
  s.folders = 4;
  s.writes = {true, true, true, true, true, true, false, true, false};
  s.existed = {false, true, false, false, true, false, true, false, true};
  s.touched = {false, true, true, true, false, false, true};
  s.effects = 1;
  return s;
}

class CrashV2Test : public ApplyV2Test {
 protected:
  CrashV2Test() { exe_ = kHookedCore; }

  // After recover: exactly one of the two trees, the state that says so,
  // the store checked, a second recover a no-op, the root usable again.
  void expect_recovered_cleanly(const std::string& id, const std::string& why) {
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << why << ": " << rec.err;
    const bool before = all_before(), after = all_after();
    EXPECT_TRUE(before || after) << why << ": neither all-before nor all-after; against before:" << differences(before_)
                                 << "; against after:" << differences(after_);
    EXPECT_EQ(state_of(id), after ? "DONE" : "ROLLED_BACK") << why;
    EXPECT_EQ(store_problems(), "") << why;
    expect_recover_is_a_noop(why);
    EXPECT_EQ(core({"status"}).code, 0) << why;
  }
};

std::string point_name(const ::testing::TestParamInfo<std::string>& pinfo) {
  std::string n = pinfo.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

TEST_F(CrashV2Test, TheMatrixShapeIsTheFixturePlans) {
  const std::string id = plan_apply_case();
  auto layout = store::RootLayout::for_root(root_.string());
  auto st = store::Store::open(layout.database, read_only());
  ASSERT_TRUE(st.ok());
  auto txn = st->find(id);
  ASSERT_TRUE(txn.ok());
  auto sealed = st->load_sealed(*txn);
  ASSERT_TRUE(sealed.ok()) << sealed.error().line();
  auto plan = decode_canonical_plan_v2(sealed->canonical_plan);
  ASSERT_TRUE(plan.ok()) << plan.error().line();
  EXPECT_EQ(plan_shape(*plan), fixture_shape());
  // The plan takes over conf.txt (an existing file nobody manages, 0664
  // where the group is the user's own), so every point below also kills a
  // take-over: its bytes and mode come back exactly (tree()) at all-before.
  CmdResult shown = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(
      shown.out.find(fmt::format("take over conf.txt (exists, not managed yet): mode {:04o} -> 0644", conf_mode_)),
      std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("create folder bin/ (mode 0750)"), std::string::npos) << shown.out;
  // store.prepare, 4 folders, 7 temp files, syncfs, COMMITTING, 9
  // operations, 7 folders, COMMITTED, 3 per effect, DONE.
  EXPECT_EQ(apply_v2_crash_points(fixture_shape()).size(), 35u);
  // ROLLING_BACK, 4 backups, syncfs, 9 operations, 4 folders removed, the
  // 3 touched folders left ("", etc, etc/app), ROLLED_BACK.
  EXPECT_EQ(rollback_v2_crash_points(fixture_shape()).size(), 23u);
  EXPECT_EQ(commit_v2_fault_points(fixture_shape()).size(), 28u);
}

// `plan` killed at each durable step of its own (the proposal row, its id
// and document, the stat cache entries of the observed targets, the seal):
// no target is ever written, recover leaves the proposal ABANDONED (or, once
// sealed, SEALED), the store checks clean, and the next plan works.
TEST_F(CrashV2Test, PlanKilledAtEachOfItsStoreStepsWritesNothing) {
  spit(base_ / "case", "apply\n");  // the fixture plan: existing targets to observe (and cache)
  for (std::string point : {"store.proposal.begin", "store.proposal.id", "store.stat_cache", "store.seal"}) {
    SCOPED_TRACE(point);
    // An empty stat cache, so that every plan reads the targets and records
    // them (store.stat_cache is reached): an entry an earlier plan recorded
    // two seconds after the targets changed would be trusted instead, and
    // whether two seconds had passed would decide the test.
    sql(root_ / ".dot" / "store.db", "DELETE FROM stat_cache");
    CmdResult crashed =
        core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"}, {"DOT_TEST_CRASH_AT=" + point});
    ASSERT_EQ(crashed.signal, SIGKILL) << crashed.out << crashed.err;
    EXPECT_TRUE(all_before()) << differences(before_);
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << rec.err;
    EXPECT_TRUE(all_before()) << differences(before_);
    EXPECT_EQ(store_problems(), "");
    expect_recover_is_a_noop(point);
  }
  CmdResult again = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"});
  EXPECT_EQ(again.code, 0) << again.err;
}

class ApplyV2CrashPoint : public CrashV2Test, public ::testing::WithParamInterface<std::string> {};

TEST_P(ApplyV2CrashPoint, RecoversToAllBeforeOrAllAfter) {
  const std::string& point = GetParam();
  const std::string id = plan_apply_case();
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(crashed.signal, SIGKILL) << "did not stop at " << point << ": " << crashed.err;
  const std::string state = state_of(id);
  if (state != "SEALED" && state != "DONE") {
    CmdResult blocked = core({"plan", "--plugin", "org.test.gplan", "--allow-audit-plugin"});
    EXPECT_NE(blocked.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << blocked.err;
  }
  expect_recovered_cleanly(id, point);
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, ApplyV2CrashPoint, ::testing::ValuesIn(apply_v2_crash_points(fixture_shape())),
                         point_name);

// Every operation applied, then the crash: recover's rollback walk has
// everything to undo, and is itself killed at each of its durable steps.
class RecoverV2CrashPoint : public CrashV2Test, public ::testing::WithParamInterface<std::string> {};

TEST_P(RecoverV2CrashPoint, RecoversAgain) {
  const std::string& point = GetParam();
  const std::string id = plan_apply_case();
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=apply.op8.removed"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  CmdResult rec = core({"recover"}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(rec.signal, SIGKILL) << "recover did not stop at " << point << ": " << rec.err;
  expect_recovered_cleanly(id, point);
  EXPECT_TRUE(all_before()) << differences(before_);
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, RecoverV2CrashPoint, ::testing::ValuesIn(rollback_v2_crash_points(fixture_shape())),
                         point_name);

// `rollback` of the DONE transaction killed at each durable step; recover finishes it.
class RollbackV2CrashPoint : public CrashV2Test, public ::testing::WithParamInterface<std::string> {};

TEST_P(RollbackV2CrashPoint, RecoverFinishesTheRollback) {
  const std::string& point = GetParam();
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult crashed = core({"rollback", id}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(crashed.signal, SIGKILL) << "rollback did not stop at " << point << ": " << crashed.err;
  expect_recovered_cleanly(id, point);
  EXPECT_TRUE(all_before()) << differences(before_);
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, RollbackV2CrashPoint, ::testing::ValuesIn(rollback_v2_crash_points(fixture_shape())),
                         point_name);

class CommitV2Fault : public CrashV2Test, public ::testing::WithParamInterface<std::string> {};

TEST_P(CommitV2Fault, RollsBackWithDotECommit) {
  for (std::string err : {"ENOSPC", "EIO"}) {
    SCOPED_TRACE(err);
    const std::string id = plan_apply_case();
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

INSTANTIATE_TEST_SUITE_P(FaultsV2, CommitV2Fault, ::testing::ValuesIn(commit_v2_fault_points(fixture_shape())),
                         point_name);

// A target edited by someone else while the transaction was interrupted:
// recover restores every other target, leaves that one exactly as found
// (evidence), removes the folders it can, and stays ROLLING_BACK with
// DOT_E_RECOVERY_REQUIRED naming it.
TEST_F(CrashV2Test, RecoverLeavesAConcurrentEditAndSaysSo) {
  const std::string id = plan_apply_case();
  ASSERT_EQ(core({"apply", id}, {"DOT_TEST_CRASH_AT=apply.op8.removed"}).signal, SIGKILL);
  spit(root_ / "etc" / "app" / "main.conf", "edited meanwhile\n", 0600);
  CmdResult rec = core({"recover"});
  EXPECT_EQ(rec.code, 1);
  EXPECT_EQ(rec.err.rfind("DOT_E_RECOVERY_REQUIRED: ", 0), 0u) << rec.err;
  EXPECT_NE(rec.err.find("etc/app/main.conf"), std::string::npos) << rec.err;
  auto want = before_;
  want["etc/app/main.conf"] = fmt::format("{:o}", S_IFREG | 0600) + ":" + sha256_hex("edited meanwhile\n");
  EXPECT_EQ(tree(root_), want) << differences(want);
  EXPECT_EQ(state_of(id), "ROLLING_BACK");
  EXPECT_EQ(store_problems(), "");
}

// A failed root-sync leaves the transaction COMMITTED; the retry fsyncs
// every target and every touched folder before the root, each a crash point.
class RetriedRootSyncV2Point : public CrashV2Test, public ::testing::WithParamInterface<std::string> {};

TEST_P(RetriedRootSyncV2Point, FsyncsEveryTargetAndFolderThenTheRoot) {
  const std::string& point = GetParam();
  const std::string id = plan_apply_case();
  CmdResult failed = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"});
  ASSERT_NE(failed.err.find("DOT_E_POST_COMMIT"), std::string::npos) << failed.err;
  EXPECT_TRUE(all_after()) << differences(after_);
  CmdResult crashed = core({"retry-effects"}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(crashed.signal, SIGKILL) << "the retry did not reach " << point << ": " << crashed.err;
  expect_recovered_cleanly(id, point);
  EXPECT_TRUE(all_after());
  EXPECT_EQ(ledger(id), "SUCCEEDED");
}

INSTANTIATE_TEST_SUITE_P(MatrixV2, RetriedRootSyncV2Point, ::testing::ValuesIn(retried_effect_crash_points(9, 0, 7)),
                         point_name);

}  // namespace
}  // namespace dot::core::testing
