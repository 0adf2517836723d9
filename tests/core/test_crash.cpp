// The crash matrix (docs/spec/transactions.md, "Crash points"): SIGKILL at every
// durable step, then recover; the targets are exactly all-before or
// all-after, the store passes its checks, a second recover changes nothing,
// and no temp file is left. Also the I/O faults of the commit and of the
// root-sync effect, and SIGINT/SIGTERM during plan and apply.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cctype>

#include "dot/core/test_hooks.h"
#include "dot/dpp/plugin.h"
#include "engine_harness.h"

namespace dot::core::testing {
namespace {

const std::string kHello(dpp::HelloPlugin::content("hello.txt"));
const std::string kWelcome(dpp::HelloPlugin::content("welcome.txt"));
const std::string kOriginal = "the user's own hello\n";

class CrashTest : public EngineTest {
 protected:
  // Every command of these tests runs the build with the hooks compiled in.
  CrashTest() { exe_ = kHookedCore; }
  void SetUp() override {
    EngineTest::SetUp();
    // One target exists (restored from its backup), one does not (removed).
    spit(root_ / "hello.txt", kOriginal);
  }
  bool all_before() { return hello() == kOriginal && !fs::exists(root_ / "welcome.txt"); }
  bool all_after() { return hello() == kHello && welcome() == kWelcome; }

  // After recover: consistent, checked, idempotent, clean.
  void expect_recovered_cleanly(const std::string& id, const std::string& why) {
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << why << ": " << rec.err;
    EXPECT_TRUE(all_before() || all_after()) << why << ": hello=" << hello() << " welcome=" << welcome();
    std::string state = state_of(id);
    if (all_after())
      EXPECT_EQ(state, "DONE") << why;
    else
      EXPECT_EQ(state, "ROLLED_BACK") << why;
    EXPECT_EQ(store_problems(), "") << why;
    EXPECT_TRUE(temp_files().empty()) << why;
    CmdResult again = core({"recover", "--json"});
    ASSERT_EQ(again.code, 0) << why << ": " << again.err;
    EXPECT_NE(again.out.find("\"changed\":false"), std::string::npos) << why << ": " << again.out;
    // And the root is usable again.
    EXPECT_EQ(core({"status"}).code, 0);
  }
};

// One test per crash point, so each stays short and names its point.
class ApplyCrashPoint : public CrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ApplyCrashPoint, RecoversToAllBeforeOrAllAfter) {
  const std::string& point = GetParam();
  std::string id = plan_ok();
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(crashed.signal, SIGKILL) << "did not stop at " << point << ": " << crashed.err;
  // Until recovered, plan and apply refuse.
  std::string state = state_of(id);
  if (state != "SEALED" && state != "DONE") {
    CmdResult blocked = core({"plan", "--allow-audit-plugin"});
    EXPECT_NE(blocked.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << blocked.err;
    CmdResult status = core({"status", "--json"});
    EXPECT_NE(status.out.find("\"recovery_required\":true"), std::string::npos) << status.out;
  }
  expect_recovered_cleanly(id, point);
}

std::string point_name(const ::testing::TestParamInfo<std::string>& pinfo) {
  std::string n = pinfo.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Matrix, ApplyCrashPoint, ::testing::ValuesIn(apply_crash_points(2, 1)), point_name);

TEST(CrashPoints, TheMatrixCoversEveryDurableStep) {
  // 2 store commits before the slots, 3 per slot, COMMITTED, 3 per effect, DONE.
  EXPECT_EQ(apply_crash_points(2, 1).size(), 13u);
  EXPECT_EQ(rollback_crash_points(2).size(), 6u);
  EXPECT_EQ(commit_fault_points(2).size(), 8u);
  // ATTEMPTED, one per slot, the folder, SUCCEEDED, DONE.
  EXPECT_EQ(retried_effect_crash_points(2, 0).size(), 6u);
}

class RollbackCrashPoint : public CrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(RollbackCrashPoint, RecoversAgain) {
  const std::string& point = GetParam();
  std::string id = plan_ok();
  // Both slots renamed, then the crash: recovery has two slots to undo.
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=commit.slot1.renamed"});
  ASSERT_EQ(crashed.signal, SIGKILL);
  CmdResult rec = core({"recover"}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(rec.signal, SIGKILL) << "recover did not stop at " << point << ": " << rec.err;
  expect_recovered_cleanly(id, point);
  EXPECT_TRUE(all_before());
}

INSTANTIATE_TEST_SUITE_P(Matrix, RollbackCrashPoint, ::testing::ValuesIn(rollback_crash_points(2)), point_name);

class CommitFault : public CrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(CommitFault, RollsBackWithDotECommit) {
  for (std::string err : {"ENOSPC", "EIO"}) {
    SCOPED_TRACE(err);
    std::string id = plan_ok();
    CmdResult r = core({"apply", id}, {"DOT_TEST_FAULT=" + GetParam() + ":" + err});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("DOT_E_COMMIT: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(err), std::string::npos) << r.err;
    EXPECT_TRUE(all_before()) << "hello=" << hello();
    EXPECT_EQ(state_of(id), "ROLLED_BACK");
    EXPECT_TRUE(temp_files().empty());
    EXPECT_EQ(store_problems(), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, CommitFault, ::testing::ValuesIn(commit_fault_points(2)), point_name);

TEST_F(CrashTest, RollbackCommandCrashIsRecovered) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}).code, 0);
  CmdResult crashed = core({"rollback", id}, {"DOT_TEST_CRASH_AT=rollback.slot1.restored"});
  ASSERT_EQ(crashed.signal, SIGKILL);
  CmdResult rec = core({"recover"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  EXPECT_TRUE(all_before());
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_EQ(store_problems(), "");
}

TEST_F(CrashTest, CrashDuringPlanLeavesNoTargetAndRecoverAbandons) {
  for (std::string point : {"store.proposal.begin", "plan.plugin_hashed", "store.proposal.id", "store.seal"}) {
    SCOPED_TRACE(point);
    CmdResult crashed = core({"plan", "--allow-audit-plugin"}, {"DOT_TEST_CRASH_AT=" + point});
    ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
    EXPECT_EQ(hello(), kOriginal);
    EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
    CmdResult rec = core({"recover", "--json"});
    ASSERT_EQ(rec.code, 0) << rec.err;
    EXPECT_TRUE(stage_leftovers().empty());
    EXPECT_EQ(last_state(), point == "store.seal" ? "SEALED" : "ABANDONED");
    EXPECT_EQ(store_problems(), "");
    EXPECT_NE(core({"recover", "--json"}).out.find("\"changed\":false"), std::string::npos);
  }
}

// A plan killed before it sealed leaves its transaction PROPOSING: status
// lists it as unfinished (text and JSON) until recover abandons it (issue 30).
TEST_F(CrashTest, StatusListsAPlanKilledBeforeItSealedUntilRecover) {
  CmdResult crashed = core({"plan", "--allow-audit-plugin"}, {"DOT_TEST_CRASH_AT=store.proposal.id"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  ASSERT_EQ(last_state(), "PROPOSING");
  CmdResult text = core({"status"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.find("unfinished    none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  PROPOSING  from org.dot.hello  (run dot-core recover --root "), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("retry-effects"), std::string::npos) << text.out;
  CmdResult js = core({"status", "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  EXPECT_NE(js.out.find("\"recovery_required\":true"), std::string::npos) << js.out;
  EXPECT_NE(js.out.find("\"state\":\"PROPOSING\""), std::string::npos) << js.out;
  ASSERT_EQ(core({"recover"}).code, 0);
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_NE(core({"status"}).out.find("unfinished    none\n"), std::string::npos);
  EXPECT_NE(core({"status", "--json"}).out.find("\"unfinished\":[]"), std::string::npos);
}

// Only a COMMITTED transaction has effects left to retry: neither status nor
// plan's refusal offers retry-effects for a PREPARED one.
TEST_F(CrashTest, APreparedTransactionIsOfferedRecoverOnly) {
  std::string id = plan_ok();
  CmdResult crashed = core({"apply", id}, {"DOT_TEST_CRASH_AT=store.prepare"});
  ASSERT_EQ(crashed.signal, SIGKILL) << crashed.err;
  ASSERT_EQ(state_of(id), "PREPARED");
  CmdResult text = core({"status"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("PREPARED  from org.dot.hello  (run dot-core recover --root "), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("retry-effects"), std::string::npos) << text.out;
  CmdResult plan = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(plan.code, 1);
  EXPECT_NE(plan.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("is PREPARED: run `dot-core recover --root "), std::string::npos) << plan.err;
  EXPECT_EQ(plan.err.find("retry-effects"), std::string::npos) << plan.err;
  expect_recovered_cleanly(id, "store.prepare");
}

TEST_F(CrashTest, UnknownFaultSpellingIsRefusedNotIgnored) {
  std::string id = plan_ok();
  CmdResult r = core({"apply", id}, {"DOT_TEST_FAULT=commit.slot0.write"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_TEST_FAULT"), std::string::npos) << r.err;
  EXPECT_EQ(state_of(id), "SEALED");
}

TEST_F(CrashTest, FailedRootSyncIsPostCommitAndRetryEffectsResumes) {
  std::string id = plan_ok();
  CmdResult r = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("DOT_E_POST_COMMIT"), std::string::npos) << r.err;
  EXPECT_TRUE(all_after());
  EXPECT_EQ(state_of(id), "COMMITTED");
  EXPECT_EQ(ledger(id), "FAILED");
  CmdResult status = core({"status", "--json"});
  EXPECT_NE(status.out.find("POST_COMMIT_FAILED"), std::string::npos) << status.out;
  CmdResult blocked = core({"plan", "--allow-audit-plugin"});
  EXPECT_NE(blocked.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << blocked.err;
  CmdResult retry = core({"retry-effects"});
  ASSERT_EQ(retry.code, 0) << retry.err;
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_EQ(ledger(id), "SUCCEEDED");
  EXPECT_EQ(store_problems(), "");
}

// After a failed fsync Linux may drop the dirty pages it could not write, so
// fsync'ing the folder again proves nothing: the retried root-sync re-opens
// and fsyncs every target of the plan, then the folder. A crash point after
// each of those steps shows each is reached, and recover finishes from any.
class RetriedRootSyncPoint : public CrashTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(RetriedRootSyncPoint, FsyncsEveryTargetThenTheFolder) {
  const std::string& point = GetParam();
  std::string id = plan_ok();
  CmdResult failed = core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"});
  ASSERT_NE(failed.err.find("DOT_E_POST_COMMIT"), std::string::npos) << failed.err;
  CmdResult crashed = core({"retry-effects"}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(crashed.signal, SIGKILL) << "the retry did not reach " << point << ": " << crashed.err;
  expect_recovered_cleanly(id, point);
  EXPECT_TRUE(all_after());
  EXPECT_EQ(ledger(id), "SUCCEEDED");
}

INSTANTIATE_TEST_SUITE_P(Matrix, RetriedRootSyncPoint, ::testing::ValuesIn(retried_effect_crash_points(2, 0)),
                         point_name);

TEST_F(CrashTest, FailedTargetFsyncInARetryIsPostCommitAgain) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"}).code, 1);
  CmdResult again = core({"retry-effects"}, {"DOT_TEST_FAULT=effect0.slot1.sync:EIO"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("DOT_E_POST_COMMIT"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("welcome.txt"), std::string::npos) << again.err;
  EXPECT_EQ(state_of(id), "COMMITTED");
  EXPECT_EQ(ledger(id), "FAILED");
  CmdResult retry = core({"retry-effects"});
  ASSERT_EQ(retry.code, 0) << retry.err;
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_EQ(store_problems(), "");
}

// A target replaced after the commit holds none of our data: the retry
// neither follows a symlink nor opens anything but a regular file (a FIFO
// would block), and still finishes.
TEST_F(CrashTest, RetryOpensNoTargetReplacedSinceTheCommit) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}, {"DOT_TEST_FAULT=effect0.sync:EIO"}).code, 1);
  fs::path fifo = base_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::remove(root_ / "hello.txt");
  fs::create_symlink(fifo, root_ / "hello.txt");
  fs::remove(root_ / "welcome.txt");
  ASSERT_EQ(::mkfifo((root_ / "welcome.txt").c_str(), 0600), 0);
  CmdResult retry = core({"retry-effects"});
  ASSERT_EQ(retry.code, 0) << retry.err;
  EXPECT_EQ(state_of(id), "DONE");
  EXPECT_TRUE(fs::is_symlink(root_ / "hello.txt"));
  EXPECT_TRUE(fs::is_fifo(root_ / "welcome.txt"));
}

// Paused at a durable step, a signal arrives; the command finishes the step,
// stops at the next safe point and leaves what `recover` finishes.
pid_t start_paused(const std::vector<std::string>& args, const fs::path& pause, const std::string& point,
                   std::optional<ChildProcess>& holder) {
  SpawnOptions o;
  o.path = bin(kHookedCore);
  o.argv = {kHookedCore};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"LANG=C", "DOT_TEST_PAUSE_AT=" + point + ":" + pause.string()};
  o.stdin_mode = StdioMode::DevNull;
  o.stdout_mode = StdioMode::DevNull;
  auto child = spawn(o);
  if (!child.ok()) return -1;
  holder.emplace(std::move(*child));
  for (int i = 0; i < 1000 && !fs::exists(pause); ++i) ::usleep(10000);
  return fs::exists(pause) ? holder->pid() : -1;
}

// Processes (other than us) whose working directory is inside `dir`.
std::vector<pid_t> processes_in(const fs::path& dir) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    auto cwd = fs::read_symlink(e.path() / "cwd", ec);
    if (!ec && cwd.string().rfind(dir.string(), 0) == 0) out.push_back(std::stoi(name));
  }
  return out;
}

TEST_F(CrashTest, SigtermDuringApplyStopsAtASafePointAndRecoverFinishes) {
  std::string id = plan_ok();
  fs::path pause = base_ / "pause";
  std::optional<ChildProcess> child;
  pid_t pid = start_paused({"apply", id, "--root", root_.string()}, pause, "commit.slot0.renamed", child);
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGTERM);
  fs::remove(pause);
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(st.has_value());
  // 128 + SIGTERM, after the error line (docs/user-guide.md).
  EXPECT_EQ(st->code, 143);
  auto err = read_all(child->stderr_fd().get(), 1 << 20);
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->rfind("DOT_E_RECOVERY_REQUIRED: apply of " + id + " interrupted by SIGTERM", 0), 0u) << *err;
  EXPECT_NE(err->find("run `dot-core recover --root " + root_.string() + "`"), std::string::npos) << *err;
  EXPECT_EQ(state_of(id), "COMMITTING");
  EXPECT_EQ(hello(), kHello) << "slot 0 was committed before the safe point";
  expect_recovered_cleanly(id, "SIGTERM");
  EXPECT_TRUE(all_before());
}

TEST_F(CrashTest, SigintDuringPlanKillsThePluginAndAbandons) {
  fs::path pause = base_ / "pause";
  std::optional<ChildProcess> child;
  pid_t pid = start_paused({"plan", "--allow-audit-plugin", "--root", root_.string()}, pause,
                           "store.proposal.id", child);
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(processes_in(root_).empty()) << "the plugin should be running in its stage";
  ::kill(pid, SIGINT);
  fs::remove(pause);
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(st.has_value());
  // 128 + SIGINT, after the error line (docs/user-guide.md).
  EXPECT_EQ(st->code, 130);
  auto err = read_all(child->stderr_fd().get(), 1 << 20);
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->rfind("DOT_E_PROTOCOL: interrupted by SIGINT", 0), 0u) << *err;
  EXPECT_EQ(last_state(), "ABANDONED");
  EXPECT_TRUE(processes_in(root_).empty());
  EXPECT_TRUE(stage_leftovers().empty());
  EXPECT_EQ(hello(), kOriginal);
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
}

// ---- races between the check and the rename --------------------------------

TEST_F(CrashTest, TargetSwappedForSymlinkBeforeRenameIsRefusedAndNothingOutsideTouched) {
  fs::path outside = base_ / "outside.txt";
  spit(outside, "outside\n");
  std::string id = plan_ok();
  fs::path pause = base_ / "pause";
  std::optional<ChildProcess> child;
  ASSERT_GT(start_paused({"apply", id, "--root", root_.string()}, pause, "commit.slot0.temp_synced", child), 0);
  fs::remove(root_ / "hello.txt");
  fs::create_symlink(outside, root_ / "hello.txt");
  fs::remove(pause);
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 1);
  EXPECT_EQ(slurp(outside), "outside\n");
  EXPECT_TRUE(fs::is_symlink(root_ / "hello.txt"));
  EXPECT_FALSE(fs::exists(root_ / "welcome.txt"));
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(CrashTest, RootSwappedForSymlinkMidApplyWritesOnlyTheOriginalRoot) {
  fs::path elsewhere = base_ / "elsewhere";
  fs::create_directory(elsewhere);
  std::string id = plan_ok();
  fs::path pause = base_ / "pause";
  std::optional<ChildProcess> child;
  ASSERT_GT(start_paused({"apply", id, "--root", root_.string()}, pause, "commit.slot0.temp_synced", child), 0);
  fs::path moved = base_ / "moved";
  fs::rename(root_, moved);
  fs::create_directory_symlink(elsewhere, root_);
  fs::remove(pause);
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 0);
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing may be written through the swapped path";
  EXPECT_EQ(slurp(moved / "hello.txt"), kHello);
  EXPECT_EQ(slurp(moved / "welcome.txt"), kWelcome);
  fs::remove(root_);
  fs::rename(moved, root_);
}

TEST_F(CrashTest, TargetAppearingBeforeRenameOfAnAbsentSlotIsConflict) {
  std::string id = plan_ok();
  fs::path pause = base_ / "pause";
  std::optional<ChildProcess> child;
  ASSERT_GT(start_paused({"apply", id, "--root", root_.string()}, pause, "commit.slot1.temp_synced", child), 0);
  spit(root_ / "welcome.txt", "someone else's\n");
  fs::remove(pause);
  auto st = child->wait_until(Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 1);
  EXPECT_EQ(welcome(), "someone else's\n");
  EXPECT_EQ(hello(), kOriginal) << "slot 0 rolled back";
  EXPECT_EQ(state_of(id), "ROLLED_BACK");
}

TEST_F(CrashTest, ConcurrentEditFoundDuringRecoveryIsPreserved) {
  std::string id = plan_ok();
  ASSERT_EQ(core({"apply", id}, {"DOT_TEST_CRASH_AT=commit.slot1.dir_synced"}).signal, SIGKILL);
  spit(root_ / "hello.txt", "edited while unfinished\n");
  CmdResult rec = core({"recover"});
  EXPECT_EQ(rec.code, 1);
  EXPECT_NE(rec.err.find("DOT_E_RECOVERY_REQUIRED"), std::string::npos) << rec.err;
  EXPECT_EQ(hello(), "edited while unfinished\n");
  EXPECT_EQ(state_of(id), "ROLLING_BACK");
}

}  // namespace
}  // namespace dot::core::testing
