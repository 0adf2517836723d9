// Roots made by the Go reference (docs/spec/go-roots.md), from tests/adopt's own
// generator: every state of section 8 in both generations, with and without
// a user file, with and without history; adopt::survey (what `adopt
// --dry-run` runs) names the reference's state, its ids and what finishing
// will do, and changes nothing; bad input is refused, typed, naming the file.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "dot/base/json.h"
#include "dot/adopt/go_root.h"
#include "dot/core/plan_document.h"
#include "../core/engine_harness.h"
#include "cases.h"
#include "go_root_gen.h"
#include "tree.h"

namespace dot::adopt_test {
namespace {

namespace go = dot::adopt;
using core::testing::CmdResult;
using core::testing::dot_core;

struct Expect {
  const char* state;
  const char* finish;
  bool ids;  // the active transaction has plan.json, so ids are reported
};

// Section 8, the "status" and "correct recovery outcome" columns, as adopt
// reports them.
const std::map<std::string, Expect>& expectations() {
  static const std::map<std::string, Expect> m = {
      {"idle-after-init", {"IDLE", "nothing", false}},
      {"registered", {"IDLE", "nothing", false}},
      {"stage-partial", {"ABANDONED", "discard", false}},
      {"staged", {"ABANDONED", "discard", false}},
      {"prepare-created", {"ABANDONED", "discard", false}},
      {"prepare-artifact-0", {"ABANDONED", "discard", false}},
      {"prepare-artifact-1", {"ABANDONED", "discard", false}},
      {"prepare-sealed", {"ABANDONED", "discard", true}},
      {"prepare-torn-wal", {"ABANDONED", "discard", true}},
      {"prepared", {"PREPARED", "all-before", true}},
      {"committing", {"COMMITTING", "all-before", true}},
      {"flushed-0", {"COMMITTING", "all-before", true}},
      {"renamed-0", {"COMMITTING", "all-before", true}},
      {"flushed-1", {"COMMITTING", "all-before", true}},
      {"renamed-1", {"COMMITTING", "all-before", true}},
      {"renamed-1-torn-committed", {"COMMITTING", "all-before", true}},
      {"committed-effects-pending", {"POST_COMMIT_PENDING", "effects", true}},
      {"effect-attempted", {"POST_COMMIT_FAILED", "effects", true}},
      {"effect-failed", {"POST_COMMIT_FAILED", "effects", true}},
      {"committed", {"COMMITTED", "all-after", true}},
      {"rollback-started", {"ROLLING_BACK", "all-before", true}},
      {"rollback-restored-1", {"ROLLING_BACK", "all-before", true}},
      {"rollback-flushed-0", {"ROLLING_BACK", "all-before", true}},
      {"rollback-restored-0", {"ROLLING_BACK", "all-before", true}},
      {"rolled-back", {"ROLLED_BACK", "all-before", true}},
      {"archive-intent", {"ARCHIVING", "all-after", true}},
      {"archive-stage", {"ARCHIVING", "all-after", true}},
      {"archive-rename", {"ARCHIVING", "all-after", true}},
      {"archived", {"IDLE", "nothing", false}},
      {"discard-stage-entries", {"ABANDONED", "discard", true}},
      {"discard-stage", {"ABANDONED", "discard", true}},
      {"discard-transaction-entries", {"ABANDONED", "discard", false}},
  };
  return m;
}


// ---- dot-core reads the plan of docs/spec/go-roots.md section 10 -----------------


// dot-core's plan model reads the reference's plan.json of section 10 and
// recomputes both ids; writer_form gives back exactly the bytes.
TEST(GoRootReader, DecodesAndReencodesTheSection10PlanJson) {
  for (bool effects : {true, false}) {
    GoPlan p = section10_plan(effects);
    p.proposal_id = go_proposal_id(p);
    const std::string id = go_plan_id(p);
    const std::string bytes = go_writer_form(p, id);
    auto doc = core::decode_plan_document(bytes);
    ASSERT_TRUE(doc.ok()) << doc.error().line();
    EXPECT_EQ(doc->plan_id, effects ? "2ce723872795594ce2bb335399dcc3e709f13e8c9cb4e4b5621aee80dafdf6c8"
                                    : "a1f1b944bed4dabb0093b432cdf042d1bd14611ef38599f46627e944f037f7b6");
    EXPECT_EQ(doc->plan.pre_capability(), !effects);
    EXPECT_EQ(go::writer_form(doc->plan, doc->plan_id), bytes);
  }
}

// ---- every state, both generations ------------------------------------------




class EveryState : public ::testing::TestWithParam<Case> {};

void check_survey(const Case& c, bool user_file, int history, bool profile) {
  SCOPED_TRACE(::testing::Message() << gen_name(c.gen) << " " << c.state << " user_file=" << user_file
                                    << " history=" << history << " profile=" << profile);
  Scratch scratch;
  const fs::path root = scratch.dir() / "root";
  GoRootSpec spec;
  spec.gen = c.gen;
  spec.state = c.state;
  spec.user_file = user_file;
  spec.history = history;
  spec.manifest_profile = profile;
  spec.seed = static_cast<unsigned>(history * 2 + user_file + 7);
  const GoRoot made = make_go_root(root, spec);
  const std::string before = fingerprint(root);

  auto s = go::survey(root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_EQ(fingerprint(root), before) << "the survey changed the tree";

  const Expect& want = expectations().at(c.state);
  EXPECT_EQ(go::ref_state_name(s->state), want.state);
  EXPECT_EQ(go::finish_name(s->finish), want.finish);
  EXPECT_EQ(s->root_id, made.root_id);
  ASSERT_EQ(!made.active.plan_id.empty(), want.ids) << "the generator and the table disagree";
  if (want.ids) {
    ASSERT_TRUE(s->active.has_value());
    EXPECT_EQ(s->active->plan_id, made.active.plan_id);
    EXPECT_EQ(s->active->proposal_id, made.active.proposal_id);
  } else {
    EXPECT_TRUE(!s->active || s->active->plan_id.empty());
  }
  const bool any_plan = want.ids || !made.history.empty();
  EXPECT_EQ(go::generation_name(s->generation), any_plan ? gen_name(c.gen) : "unknown");
  std::vector<GoTxnIds> hist = made.history;
  std::sort(hist.begin(), hist.end(), [](const auto& a, const auto& b) { return a.plan_id < b.plan_id; });
  ASSERT_EQ(s->history.size(), hist.size());
  for (std::size_t i = 0; i < hist.size(); ++i) {
    EXPECT_EQ(s->history[i].plan_id, hist[i].plan_id);
    EXPECT_EQ(s->history[i].proposal_id, hist[i].proposal_id);
    EXPECT_EQ(go::ref_state_name(s->history[i].state), hist[i].state);
  }
  EXPECT_EQ(s->manifest.has_value(), c.state != "idle-after-init");
}

TEST_P(EveryState, SurveyNamesStateIdsAndFinishAndChangesNothing) {
  const Case& c = GetParam();
  for (bool user_file : {false, true})
    for (int history : {0, 3}) {
      if (c.state == "idle-after-init" && history) continue;  // history needs a registered plugin
      check_survey(c, user_file, history, true);
    }
  // The oldest host's manifest, without "profile", wrote pre-capability plans.
  if (c.gen == GoGen::PreCapability && c.state != "idle-after-init") check_survey(c, true, 1, false);
}


INSTANTIATE_TEST_SUITE_P(GoRoots, EveryState, ::testing::ValuesIn(all_cases()), case_name);

// ---- bad input: typed, naming the file, nothing changed -----------------------

struct Bad {
  Scratch scratch;
  fs::path root;
  GoRoot made;
  explicit Bad(const std::string& state, bool user_file = true, GoGen gen = GoGen::Effects, int history = 1) {
    root = scratch.dir() / "root";
    GoRootSpec spec;
    spec.gen = gen;
    spec.state = state;
    spec.user_file = user_file;
    spec.history = history;
    made = make_go_root(root, spec);
  }
  fs::path txn() const { return root / ".dot-txn"; }
  // Rewrites a file the generator made, keeping its mode.
  void rewrite(const fs::path& p, const std::string& bytes) const {
    struct stat st {};
    ASSERT_EQ(::lstat(p.c_str(), &st), 0) << p;
    ::chmod(p.c_str(), 0600);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    ::chmod(p.c_str(), st.st_mode & 07777);
  }
  // The survey fails with `code` and `kind`, its detail naming `file`, and
  // the tree is exactly as the test left it.
  void refused(const char* code, const char* kind, const std::string& file) const {
    const std::string before = fingerprint(root);
    auto s = go::survey(root.string());
    ASSERT_FALSE(s.ok()) << "accepted, state " << go::ref_state_name(s->state);
    EXPECT_EQ(code_name(s.error().code), code) << s.error().line();
    EXPECT_EQ(s.error().kind, kind) << s.error().line();
    EXPECT_NE(s.error().detail.find(file), std::string::npos) << s.error().line();
    EXPECT_EQ(fingerprint(root), before);
  }
};

TEST(GoRootBadInput, AFolderWithoutTheMarkerIsNotAReferenceRoot) {
  Scratch scratch;
  const fs::path root = scratch.dir() / "plain";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  auto s = go::survey(root.string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::Validation);
  EXPECT_EQ(s.error().kind, "not_reference_root");
  EXPECT_NE(s.error().detail.find(".dot-root"), std::string::npos);
}

TEST(GoRootBadInput, AMarkerOfAnotherShapeIsNotAReferenceRoot) {
  Bad b("committed");
  b.rewrite(b.root / ".dot-root", "dot-hello-profile-v1:" + std::string(64, 'A') + "\n");
  b.refused("DOT_E_VALIDATION", "not_reference_root", ".dot-root");
}

TEST(GoRootBadInput, ARootNotPrivateIsRefused) {
  Bad b("committed");
  ASSERT_EQ(::chmod(b.root.c_str(), 0750), 0);
  b.refused("DOT_E_POLICY", "mode", b.root.string());
}

TEST(GoRootBadInput, ATransactionFolderNotPrivateIsRefused) {
  Bad b("committing");
  ASSERT_EQ(::chmod(b.txn().c_str(), 0755), 0);
  b.refused("DOT_E_POLICY", "mode", ".dot-txn");
}

TEST(GoRootBadInput, AFileReadableByOthersIsRefused) {
  Bad b("committed");
  ASSERT_EQ(::chmod((b.txn() / "wal").c_str(), 0644), 0);
  b.refused("DOT_E_POLICY", "mode", ".dot-txn/wal");
}

TEST(GoRootBadInput, AFileOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  Bad b("committed");
  ASSERT_EQ(::lchown((b.txn() / "plan.json").c_str(), 4242, 4242), 0);
  b.refused("DOT_E_POLICY", "owner", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, ARootOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  Bad b("committed");
  ASSERT_EQ(::lchown(b.root.c_str(), 4242, 4242), 0);
  b.refused("DOT_E_POLICY", "owner", b.root.string());
}

TEST(GoRootBadInput, APlanIdThatDoesNotMatchTheBytesIsRefused) {
  Bad b("committed");
  std::string plan = slurp(b.txn() / "plan.json");
  const std::string id = b.made.active.plan_id;
  plan.replace(plan.find(id), id.size(), std::string(64, 'e'));
  b.rewrite(b.txn() / "plan.json", plan);
  b.refused("DOT_E_VALIDATION", "plan_id_mismatch", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, AProposalIdThatDoesNotMatchTheBytesIsRefused) {
  Bad b("prepared");
  std::string plan = slurp(b.txn() / "plan.json");
  const std::string id = b.made.active.proposal_id;
  plan.replace(plan.find(id), id.size(), std::string(64, 'd'));
  b.rewrite(b.txn() / "plan.json", plan);
  b.refused("DOT_E_VALIDATION", "proposal_id_mismatch", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, AnEditedPlanWhoseIdsNoLongerMatchIsRefused) {
  Bad b("committed");
  std::string plan = slurp(b.txn() / "plan.json");
  plan.replace(plan.find(b.made.root_id) + 10, 1, plan[plan.find(b.made.root_id) + 10] == 'a' ? "b" : "a");
  b.rewrite(b.txn() / "plan.json", plan);
  b.refused("DOT_E_VALIDATION", "proposal_id_mismatch", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, APlanNotInTheWritersFormIsRefused) {
  Bad b("committed");
  b.rewrite(b.txn() / "plan.json", slurp(b.txn() / "plan.json") + "\n");
  b.refused("DOT_E_VALIDATION", "not_writer_form", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, AnEffectsPlanInAPreCapabilityRootNeedsItsKeyIntact) {
  // A pre-capability plan given an effects key: the ids no longer match.
  Bad b("committed", true, GoGen::PreCapability);
  std::string plan = slurp(b.txn() / "plan.json");
  plan.insert(plan.find("]},\"plan_id\"") + 1,
              R"(,"effects":[{"kind":"sync","target":"managed-root","failure_policy":"required"}])");
  b.rewrite(b.txn() / "plan.json", plan);
  b.refused("DOT_E_VALIDATION", "proposal_id_mismatch", ".dot-txn/plan.json");
}

TEST(GoRootBadInput, AnUnknownWalRecordIsRefused) {
  Bad b("committing");
  b.rewrite(b.txn() / "wal", slurp(b.txn() / "wal") + "{\"state\":\"APPLIED\"}\n");
  b.refused("DOT_E_VALIDATION", "corrupt_wal", ".dot-txn/wal");
}

TEST(GoRootBadInput, AWalRecordTheWriterNeverProducesIsRefused) {
  Bad b("committing");
  b.rewrite(b.txn() / "wal", "{\"state\": \"PREPARED\"}\n");
  b.refused("DOT_E_VALIDATION", "corrupt_wal", ".dot-txn/wal");
}

TEST(GoRootBadInput, AnIllegalWalSuccessionIsRefused) {
  Bad b("committing");
  b.rewrite(b.txn() / "wal", "{\"state\":\"PREPARED\"}\n{\"state\":\"COMMITTED\"}\n");
  b.refused("DOT_E_VALIDATION", "illegal_transition", ".dot-txn/wal");
}

TEST(GoRootBadInput, ATornTailThatIsNoRecordIsRefused) {
  Bad b("committing");
  b.rewrite(b.txn() / "wal", slurp(b.txn() / "wal") + "garbage");
  b.refused("DOT_E_VALIDATION", "corrupt_wal", ".dot-txn/wal");
}

TEST(GoRootBadInput, AnArtifactThatDiffersFromThePlanIsRefused) {
  Bad b("committing");
  b.rewrite(b.txn() / "artifact-1", "not what was sealed\n");
  b.refused("DOT_E_ARTIFACT_MISMATCH", "artifact", ".dot-txn/artifact-1");
}

TEST(GoRootBadInput, ABackupThatDiffersFromThePlanIsRefused) {
  Bad b("committed", true, GoGen::Effects, 0);
  b.rewrite(b.txn() / "backup-0", "older\n");
  b.refused("DOT_E_ARTIFACT_MISMATCH", "backup", ".dot-txn/backup-0");
}

TEST(GoRootBadInput, AMissingBackupIsRefused) {
  Bad b("prepared", true, GoGen::Effects, 0);
  ASSERT_EQ(::unlink((b.txn() / "backup-0").c_str()), 0);
  b.refused("DOT_E_ARTIFACT_MISMATCH", "backup", ".dot-txn/backup-0");
}

TEST(GoRootBadInput, AnArchivedArtifactThatDiffersIsRefused) {
  Bad b("registered", true, GoGen::PreCapability, 2);
  const fs::path gen = b.root / ".dot-history" / b.made.history[0].plan_id;
  b.rewrite(gen / "artifact-0", "tampered\n");
  b.refused("DOT_E_ARTIFACT_MISMATCH", "artifact", ".dot-history/" + b.made.history[0].plan_id + "/artifact-0");
}

// A plugin copy that no longer hashes to its registration is read, not
// refused (finishing never runs it), and said to be untrusted.
TEST(GoRootBadInput, APluginCopyThatDoesNotMatchItsManifestIsUntrusted) {
  Bad b("committed");
  b.rewrite(b.root / ".dot-plugin", slurp(b.root / ".dot-plugin") + "# changed\n");
  const std::string before = fingerprint(b.root);
  auto s = go::survey(b.root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_EQ(go::ref_state_name(s->state), "COMMITTED");
  EXPECT_NE(s->plugin_untrusted.find(".dot-plugin hashes to "), std::string::npos) << s->plugin_untrusted;
  EXPECT_NE(s->plugin_untrusted.find(b.made.plugin_digest), std::string::npos) << s->plugin_untrusted;
  EXPECT_EQ(fingerprint(b.root), before);
}

TEST(GoRootBadInput, AMissingPluginCopyIsUntrusted) {
  Bad b("committed");
  fs::remove(b.root / ".dot-plugin");
  auto s = go::survey(b.root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_NE(s->plugin_untrusted.find("missing"), std::string::npos) << s->plugin_untrusted;
}

TEST(GoRootBadInput, AManifestOfAnotherShapeIsRefused) {
  Bad b("registered");
  std::string m = slurp(b.root / ".dot-plugin.json");
  m.replace(m.find("audit"), 5, "trust");
  b.rewrite(b.root / ".dot-plugin.json", m);
  b.refused("DOT_E_PLUGIN_IDENTITY", "manifest", ".dot-plugin.json");
}

TEST(GoRootBadInput, AnEffectLedgerWithAWrongKeyIsRefused) {
  Bad b("effect-attempted");
  std::string l = slurp(b.txn() / "effects.wal");
  l.replace(l.find("idempotency_key\":\"") + 18, 4, "0000");
  b.rewrite(b.txn() / "effects.wal", l);
  b.refused("DOT_E_VALIDATION", "corrupt_ledger", ".dot-txn/effects.wal");
}

TEST(GoRootBadInput, AnEffectLedgerInAPreCapabilityTransactionIsRefused) {
  Bad b("committed", true, GoGen::PreCapability);
  int fd = ::open((b.txn() / "effects.wal").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);
  b.refused("DOT_E_VALIDATION", "unexpected_ledger", ".dot-txn/effects.wal");
}

TEST(GoRootBadInput, AnArchiveIntentNamingAMissingGenerationIsRefused) {
  Bad b("archived");
  int fd = ::open((b.root / ".dot-archive").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  const std::string intent = R"({"plan_id":")" + std::string(64, 'c') + R"(","stage":true})";
  ASSERT_EQ(::write(fd, intent.data(), intent.size()), static_cast<ssize_t>(intent.size()));
  ::close(fd);
  b.refused("DOT_E_VALIDATION", "archive_intent", ".dot-archive");
}

TEST(GoRootBadInput, AnEditedTargetBlocksTheRollbackTheReferenceWouldDo) {
  Bad b("renamed-0");
  b.rewrite(b.root / "hello.txt", "my own edit\n");
  b.refused("DOT_E_RECOVERY_REQUIRED", "concurrent_edit", "hello.txt");
}

TEST(GoRootBadInput, AnEditedTargetBlocksTheArchiveTheReferenceWouldFinish) {
  Bad b("archive-stage");
  b.rewrite(b.root / "welcome.txt", "my own edit\n");
  b.refused("DOT_E_RECOVERY_REQUIRED", "changed_target", "welcome.txt");
}

TEST(GoRootBadInput, AnEditAfterCommitIsTheUsersFile) {
  Bad b("committed");
  b.rewrite(b.root / "hello.txt", "my own edit\n");
  auto s = go::survey(b.root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_EQ(go::ref_state_name(s->state), "COMMITTED");
}

TEST(GoRootBadInput, AnUnknownReferenceEntryIsRefused) {
  Bad b("committed");
  std::ofstream(b.root / ".dot-something") << "x";
  b.refused("DOT_E_VALIDATION", "unknown_entry", ".dot-something");
  std::filesystem::remove(b.root / ".dot-something");
  std::ofstream(b.txn() / "notes") << "x";
  b.refused("DOT_E_VALIDATION", "unknown_entry", ".dot-txn/notes");
}

TEST(GoRootBadInput, ASymlinkAnywhereIsRefused) {
  struct Where {
    const char* state;
    std::string rel;
  };
  for (const Where& w : std::vector<Where>{{"committed", "hello.txt"},
                                           {"committed", ".dot-txn/wal"},
                                           {"committed", ".dot-txn/artifact-0"},
                                           {"committed", ".dot-stage"},
                                           {"committed", ".dot-txn"},
                                           {"committed", ".dot-plugin"},
                                           {"committed", ".dot-plugin.json"},
                                           {"committed", ".dot-lock"},
                                           {"committed", ".dot-root"},
                                           {"committed", ".dot-history"},
                                           {"flushed-0", ".dot-next-0"},
                                           {"archive-intent", ".dot-archive"},
                                           {"archive-stage", ".dot-txn/stage/hello.txt"},
                                           {"archive-stage", ".dot-txn/stage"},
                                           {"committed", ".dot-txn/plan.json"},
                                           {"committed", ".dot-txn/backup-0"},
                                           {"committed", ".dot-txn/effects.wal"},
                                           {"committed", "welcome.txt"},
                                           {"committed", ".dot-stage/welcome.txt"},
                                           {"flushed-1", ".dot-next-1"},
                                           {"committed", ".dot-history/{h}"},
                                           {"committed", ".dot-history/{h}/wal"},
                                           {"committed", ".dot-history/{h}/artifact-1"},
                                           {"committed", ".dot-history/{h}/stage/welcome.txt"}}) {
    Bad b(w.state);
    std::string rel = w.rel;
    if (auto at = rel.find("{h}"); at != std::string::npos) rel.replace(at, 3, b.made.history.at(0).plan_id);
    SCOPED_TRACE(rel);
    const fs::path p = b.root / rel;
    const fs::path moved = b.scratch.dir() / "moved";
    fs::rename(p, moved);
    fs::create_symlink(moved, p);
    b.refused("DOT_E_PATH_ESCAPE", "symlink", rel);
  }
}

TEST(GoRootBadInput, ASymlinkedRootIsRefused) {
  Bad b("committed");
  const fs::path link = b.scratch.dir() / "link";
  fs::create_symlink(b.root, link);
  auto s = go::survey(link.string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::PathEscape) << s.error().line();
}

TEST(GoRootBadInput, ARunningReferenceCommandIsSeenByItsLock) {
  Bad b("committed");
  int fd = ::open((b.root / ".dot-lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  b.refused("DOT_E_CONFLICT", "locked", ".dot-lock");
  ::close(fd);
  EXPECT_TRUE(go::survey(b.root.string()).ok());
}

TEST(GoRootBadInput, MoreThan32GenerationsIsNotAnError) {
  Bad b("committed", false, GoGen::Effects, 33);
  auto s = go::survey(b.root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_EQ(s->history.size(), 33u);
}

// ---- the command line ------------------------------------------------------

class DryRun : public ::testing::TestWithParam<Case> {};

TEST_P(DryRun, JsonReportsTheStateAndIdsAndChangesNoByte) {
  const Case& c = GetParam();
  Scratch scratch;
  const fs::path root = scratch.dir() / "root";
  GoRootSpec spec;
  spec.gen = c.gen;
  spec.state = c.state;
  spec.user_file = true;
  spec.history = c.state == "idle-after-init" ? 0 : 2;
  const GoRoot made = make_go_root(root, spec);
  const std::string before = fingerprint(root);

  CmdResult r = dot_core({"adopt", "--root", root.string(), "--dry-run", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(fingerprint(root), before) << "adopt --dry-run changed the tree";
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  json::Value v = doc->root();
  const Expect& want = expectations().at(c.state);
  auto str = [&](std::string_view key) {
    auto m = v.find(key);
    return m && m->is_string() ? std::string(m->as_string()) : std::string("<null>");
  };
  EXPECT_EQ(v.size(), 9u) << r.out;
  EXPECT_TRUE(v.find("plugin_untrusted") && v.find("plugin_untrusted")->is_null()) << r.out;
  EXPECT_EQ(str("format"), "go-hello");
  EXPECT_EQ(str("state"), want.state);
  EXPECT_EQ(str("finish"), want.finish);
  EXPECT_EQ(str("root_id"), made.root_id);
  EXPECT_EQ(str("plan_id"), want.ids ? made.active.plan_id : "<null>");
  EXPECT_EQ(str("proposal_id"), want.ids ? made.active.proposal_id : "<null>");
  EXPECT_EQ(str("generation"), want.ids || !made.history.empty() ? gen_name(c.gen) : "unknown");
  auto hist = v.find("history");
  ASSERT_TRUE(hist && hist->is_array());
  ASSERT_EQ(hist->size(), made.history.size());
  // Each generation's ids and state, sorted by plan id.
  std::vector<GoTxnIds> want_hist = made.history;
  std::sort(want_hist.begin(), want_hist.end(), [](const auto& a, const auto& b) { return a.plan_id < b.plan_id; });
  std::size_t i = 0;
  for (json::Value g : hist->elements()) {
    ASSERT_TRUE(g.is_object() && g.size() == 3u) << r.out;
    auto field = [&](std::string_view key) {
      auto f = g.find(key);
      return f && f->is_string() ? std::string(f->as_string()) : std::string("<null>");
    };
    EXPECT_EQ(field("plan_id"), want_hist[i].plan_id);
    EXPECT_EQ(field("proposal_id"), want_hist[i].proposal_id);
    EXPECT_EQ(field("state"), want_hist[i].state);
    ++i;
  }

  // The same for a person, and again nothing changed.
  CmdResult h = dot_core({"adopt", "--root", root.string(), "--dry-run"});
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find(std::string("state        ") + want.state), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("nothing was changed"), std::string::npos) << h.out;
  EXPECT_EQ(fingerprint(root), before);
}

INSTANTIATE_TEST_SUITE_P(GoRoots, DryRun, ::testing::ValuesIn(all_cases()), case_name);

TEST(DryRunCli, BadInputIsOneTypedLineAndExitOne) {
  Bad b("committing");
  b.rewrite(b.txn() / "artifact-0", "tampered\n");
  const std::string before = fingerprint(b.root);
  CmdResult r = dot_core({"adopt", "--root", b.root.string(), "--dry-run"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_ARTIFACT_MISMATCH: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(".dot-txn/artifact-0"), std::string::npos) << r.err;
  EXPECT_EQ(fingerprint(b.root), before);
  CmdResult j = dot_core({"adopt", "--root", b.root.string(), "--dry-run", "--json"});
  EXPECT_EQ(j.code, 1);
  EXPECT_NE(j.out.find("\"code\":\"DOT_E_ARTIFACT_MISMATCH\""), std::string::npos) << j.out;
}

}  // namespace
}  // namespace dot::adopt_test
