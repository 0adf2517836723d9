// `dot-core adopt` on roots made by the Go reference (spec/go-roots.md),
// from tests/adopt's own generator: every state of section 8 in both
// generations is finished to the outcome the reference's own recover /
// retry-effects / archive reaches (section 8's last column), every target
// all-before or all-after; a kill at every durable step of that leaves a
// reference root that `adopt` (or the reference) finishes the same way.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <csignal>
#include <map>

#include "dot/core/go_adopt.h"
#include "dot/core/go_root.h"
#include "../core/engine_harness.h"
#include "go_root_gen.h"
#include "tree.h"

namespace dot::adopt_test {
namespace {

namespace go = core::go;
using core::testing::CmdResult;
using core::testing::dot_core;
using core::testing::kHookedCore;
using core::testing::run_core;

std::string gen_name(GoGen g) { return g == GoGen::Effects ? "effects" : "pre-capability"; }

struct Case {
  GoGen gen;
  std::string state;
};
void PrintTo(const Case& c, std::ostream* os) { *os << gen_name(c.gen) << " " << c.state; }
std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (GoGen g : {GoGen::PreCapability, GoGen::Effects})
    for (const auto& s : go_states(g)) out.push_back({g, s});
  return out;
}
std::string case_name(const ::testing::TestParamInfo<Case>& c) {
  std::string n = gen_name(c.param.gen) + "_" + c.param.state;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

// What the reference's own finishing leaves (section 8): the state its
// status then names, and the targets.
enum class Targets { Before, After, Untouched };
struct Outcome {
  std::string state;
  Targets targets;
  bool archived = false;  // the active transaction went into history
};
Outcome outcome_of(const std::string& found_state) {
  if (found_state == "PREPARED" || found_state == "COMMITTING" || found_state == "ROLLING_BACK" ||
      found_state == "ROLLED_BACK")
    return {"ROLLED_BACK", Targets::Before};
  if (found_state == "POST_COMMIT_PENDING" || found_state == "POST_COMMIT_FAILED" || found_state == "COMMITTED")
    return {"COMMITTED", Targets::After};
  if (found_state == "ARCHIVING") return {"IDLE", Targets::Untouched, true};
  return {found_state, Targets::Untouched};  // IDLE, ABANDONED
}

struct Made {
  Scratch scratch;
  fs::path root;
  GoRoot go;
  GoRootSpec spec;
  Made(const Case& c, bool user_file, int history = 2) {
    root = scratch.dir() / "root";
    spec.gen = c.gen;
    spec.state = c.state;
    spec.user_file = user_file;
    spec.history = c.state == "idle-after-init" ? 0 : history;
    spec.seed = static_cast<unsigned>(user_file + 3);
    go = make_go_root(root, spec);
  }
  std::string hello() const { return fs::exists(root / "hello.txt") ? slurp(root / "hello.txt") : "<absent>"; }
  std::string welcome() const { return fs::exists(root / "welcome.txt") ? slurp(root / "welcome.txt") : "<absent>"; }
};

// Every target is exactly the plan's `before` (or every one its `after`):
// bytes, mode, owner.
bool targets_are(const fs::path& root, const core::Plan& plan, bool after) {
  for (const auto& op : plan.operations) {
    const core::Snapshot& want = after ? op.after : op.before;
    struct stat st {};
    if (::lstat((root / op.name).c_str(), &st) != 0) {
      if (want.exists) return false;
      continue;
    }
    if (!want.exists || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != want.mode || st.st_uid != want.uid ||
        st.st_gid != want.gid || sha256_hex(slurp(root / op.name)) != want.sha256)
      return false;
  }
  return true;
}

// The root once finished: what the reference's status would name, the
// targets all-before or all-after, history as the reference leaves it.
void expect_finished(const Made& m, const go::Survey& found, const std::string& why) {
  auto s = go::survey(m.root.string());
  ASSERT_TRUE(s.ok()) << why << ": " << s.error().line();
  const Outcome want = outcome_of(found.state);
  EXPECT_EQ(s->state, want.state) << why;
  if (want.targets != Targets::Untouched) {
    ASSERT_TRUE(found.active && found.active->plan) << why;
    EXPECT_TRUE(targets_are(m.root, *found.active->plan, want.targets == Targets::After))
        << why << ": hello=" << m.hello() << " welcome=" << m.welcome();
  }
  EXPECT_EQ(s->history.size(), found.history.size() + (want.archived ? 1 : 0)) << why;
  if (!want.archived && found.active) {
    ASSERT_TRUE(s->active.has_value()) << why;
    EXPECT_EQ(s->active->plan_id, found.active->plan_id) << why;
  }
  EXPECT_FALSE(s->archive.has_value()) << why;
}

class Finish : public ::testing::TestWithParam<Case> {};

TEST_P(Finish, ReachesTheReferencesOwnOutcome) {
  const Case& c = GetParam();
  for (bool user_file : {false, true}) {
    const std::string why = fmt::format("{} {} user_file={}", gen_name(c.gen), c.state, user_file);
    Made m(c, user_file);
    auto found = go::survey(m.root.string());
    ASSERT_TRUE(found.ok()) << why << ": " << found.error().line();
    CmdResult r = dot_core({"adopt", "--root", m.root.string(), "--json"});
    ASSERT_EQ(r.code, 0) << why << ": " << r.err;
    expect_finished(m, *found, why);
    // The reference's recover (and so adopt) has nothing left to do.
    const std::string settled = fingerprint(m.root);
    CmdResult again = dot_core({"adopt", "--root", m.root.string(), "--json"});
    ASSERT_EQ(again.code, 0) << why << ": " << again.err;
    EXPECT_EQ(fingerprint(m.root), settled) << why << ": a second run changed the root";
  }
}

INSTANTIATE_TEST_SUITE_P(GoRoots, Finish, ::testing::ValuesIn(all_cases()), case_name);

// ---- the crash matrix of finishing -------------------------------------------

struct CrashCase {
  GoGen gen;
  std::string state;
  std::string point;
};
void PrintTo(const CrashCase& c, std::ostream* os) { *os << gen_name(c.gen) << " " << c.state << " @" << c.point; }

std::vector<CrashCase> crash_cases() {
  std::vector<CrashCase> out;
  for (const Case& c : all_cases()) {
    Made m(c, true);
    auto s = go::survey(m.root.string());
    if (!s.ok()) continue;  // the survey test reports it
    for (const auto& p : go::adopt_crash_points(*s)) out.push_back({c.gen, c.state, p});
  }
  return out;
}
std::string crash_name(const ::testing::TestParamInfo<CrashCase>& c) {
  std::string n = gen_name(c.param.gen) + "_" + c.param.state + "_at_" + c.param.point;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

class FinishCrash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(FinishCrash, LeavesAReferenceRootThatAdoptFinishes) {
  const CrashCase& c = GetParam();
  Made m(Case{c.gen, c.state}, true);
  auto found = go::survey(m.root.string());
  ASSERT_TRUE(found.ok()) << found.error().line();
  CmdResult r = run_core(kHookedCore, {"adopt", "--root", m.root.string()}, {"DOT_TEST_CRASH_AT=" + c.point});
  ASSERT_EQ(r.signal, SIGKILL) << "the crash point was not reached: " << r.code << " " << r.err;
  // A reference root the reference itself could resume: it verifies.
  auto mid = go::survey(m.root.string());
  ASSERT_TRUE(mid.ok()) << mid.error().line();
  CmdResult again = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(again.code, 0) << again.err;
  expect_finished(m, *found, "after the crash at " + c.point);
}

INSTANTIATE_TEST_SUITE_P(GoRoots, FinishCrash, ::testing::ValuesIn(crash_cases()), crash_name);

// ---- refusals: typed, nothing changed ---------------------------------------

TEST(FinishRefusal, AnEditedTargetIsRefusedAndNothingChanges) {
  Made m(Case{GoGen::Effects, "renamed-0"}, true);
  core::testing::spit(m.root / "hello.txt", "someone else's edit\n");
  const std::string before = fingerprint(m.root);
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_RECOVERY_REQUIRED: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("hello.txt"), std::string::npos) << r.err;
  EXPECT_EQ(fingerprint(m.root), before);
}

TEST(FinishRefusal, ARunningReferenceCommandIsAConflict) {
  Made m(Case{GoGen::Effects, "committing"}, true);
  UniqueFd held(::open((m.root / ".dot-lock").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(held);
  ASSERT_EQ(::flock(held.get(), LOCK_EX | LOCK_NB), 0);
  const std::string before = fingerprint(m.root);
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_CONFLICT: ", 0), 0u) << r.err;
  EXPECT_EQ(fingerprint(m.root), before);
}

TEST(FinishRefusal, AFolderThatIsNotAReferenceRootGetsNoLock) {
  Scratch scratch;
  fs::create_directory(scratch.dir() / "plain");
  ::chmod((scratch.dir() / "plain").c_str(), 0700);
  const std::string before = fingerprint(scratch.dir() / "plain");
  CmdResult r = dot_core({"adopt", "--root", (scratch.dir() / "plain").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_VALIDATION: ", 0), 0u) << r.err;
  EXPECT_EQ(fingerprint(scratch.dir() / "plain"), before);
}

// The effect's fsync failing is recorded FAILED in the reference's ledger,
// as the reference records it; the next adopt runs it again.
TEST(FinishRefusal, AFailingEffectIsRecordedFailedAndRetried) {
  Made m(Case{GoGen::Effects, "committed-effects-pending"}, false);
  CmdResult r = run_core(kHookedCore, {"adopt", "--root", m.root.string()}, {"DOT_TEST_FAULT=adopt.go.effect:EIO"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("DOT_E_POST_COMMIT: ", 0), 0u) << r.err;
  auto s = go::survey(m.root.string());
  ASSERT_TRUE(s.ok()) << s.error().line();
  EXPECT_EQ(s->state, "POST_COMMIT_FAILED");
  CmdResult again = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(again.code, 0) << again.err;
  auto done = go::survey(m.root.string());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, "COMMITTED");
  ASSERT_TRUE(done->active.has_value());
  EXPECT_EQ(done->active->ledger.size(), 4u);  // ATTEMPTED, FAILED, ATTEMPTED, SUCCEEDED
}

}  // namespace
}  // namespace dot::adopt_test
