// `dot-core adopt` on roots made by the Go reference (docs/spec/go-roots.md),
// from tests/adopt's own generator: every state of section 8 in both
// generations is finished to the outcome the reference's own recover /
// retry-effects / archive reaches (section 8's last column), every target
// all-before or all-after, and imported: every transaction in dot-core's
// journal with its original ids, the reference's files gone; a second adopt
// is a no-op. A kill at every durable step leaves either a reference root
// that `adopt` finishes the same way, or the adopted root complete (its
// cleanup finished by the next adopt). After adoption every command works.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>

#include <csignal>
#include <functional>
#include <map>

#include "dot/core/applier.h"
#include "dot/adopt/adopt.h"
#include "dot/adopt/go_root.h"
#include "dot/core/plan.h"
#include "../core/engine_harness.h"
#include "cases.h"
#include "crash_cases.h"
#include "go_root_gen.h"
#include "tree.h"

namespace dot::adopt_test {
namespace {

namespace go = dot::adopt;
using core::testing::CmdResult;
using core::testing::dot_core;
using core::testing::kHookedCore;
using core::testing::run_core;



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

// One reference transaction's files, as the reference left them.
struct RefTxn {
  std::string plan_json;
  std::map<std::size_t, std::string> artifacts, backups;
};

// Every transaction folder holding a plan.json (the active one, each
// archived generation), by its plan id: read before adopt removes them, to
// compare with what the store holds after.
std::map<std::string, RefTxn> reference_bytes(const fs::path& root) {
  std::vector<fs::path> dirs = {root / ".dot-txn"};
  if (fs::is_directory(root / ".dot-history"))
    for (const auto& e : fs::directory_iterator(root / ".dot-history")) dirs.push_back(e.path());
  std::map<std::string, RefTxn> out;
  for (const auto& d : dirs) {
    if (!fs::exists(d / "plan.json")) continue;
    RefTxn t;
    t.plan_json = slurp(d / "plan.json");
    for (std::size_t i = 0; i < 2; ++i) {
      if (fs::exists(d / fmt::format("artifact-{}", i))) t.artifacts[i] = slurp(d / fmt::format("artifact-{}", i));
      if (fs::exists(d / fmt::format("backup-{}", i))) t.backups[i] = slurp(d / fmt::format("backup-{}", i));
    }
    // The writer form ends in ,"plan_id":"<64 hex>"}
    out[t.plan_json.substr(t.plan_json.size() - 66, 64)] = std::move(t);
  }
  return out;
}

struct Made {
  Scratch scratch;
  fs::path root;
  GoRoot go;
  GoRootSpec spec;
  std::map<std::string, RefTxn> ref;
  Made(const Case& c, bool user_file, int history = 2, const std::string& assurance = "audit")
      : Made(case_spec(c, user_file, history, assurance)) {}
  explicit Made(const GoRootSpec& s) : spec(s) {
    root = scratch.dir() / "root";
    go = make_go_root(root, spec);
    ref = reference_bytes(root);
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

const std::vector<std::string> kReferenceEntries = {".dot-root", ".dot-lock", ".dot-plugin", ".dot-plugin.json",
                                                    ".dot-txn", ".dot-history", ".dot-stage", ".dot-archive",
                                                    ".dot-next-0", ".dot-next-1", ".dot-adopting"};

// What the store must hold for one reference transaction once adopted.
std::string adopted_state(const std::string& go_state) {
  if (go_state == "COMMITTED") return "DONE";
  return go_state;  // ROLLED_BACK, ABANDONED
}

// The adopted root: the reference's files gone, the targets as the
// reference's finishing leaves them, and the store holding every
// transaction with its original ids, in the order they were made, its
// ledger, an ADOPTED event each, the plugin pinned, `store check` clean.
// `imported_from`: the reference state the import itself found (an adopt
// killed while finishing leaves another state for the next one); default
// found.state.
void expect_adopted(const Made& m, const go::Survey& found, const std::string& why,
                    std::optional<std::string> imported_from = std::nullopt) {
  // Adopted in one run: the import found the root as `found` says.
  const bool one_run = !imported_from;
  if (!imported_from) imported_from = std::string(go::ref_state_name(found.state));
  for (const auto& e : kReferenceEntries) EXPECT_FALSE(fs::exists(fs::symlink_status(m.root / e))) << why << ": " << e << " left";
  const Outcome want = outcome_of(std::string(go::ref_state_name(found.state)));
  if (want.targets != Targets::Untouched) {
    ASSERT_TRUE(found.active && found.active->plan) << why;
    EXPECT_TRUE(targets_are(m.root, *found.active->plan, want.targets == Targets::After))
        << why << ": hello=" << m.hello() << " welcome=" << m.welcome();
  }
  auto layout = store::RootLayout::for_root(m.root.string());
  auto st = store::Store::open(layout.database, core::testing::read_only());
  ASSERT_TRUE(st.ok()) << why << ": " << st.error().line();
  EXPECT_EQ(*st->root_id(), found.root_id) << why;
  // Expected rows, oldest first: the archived generations in the order the
  // generator made them, then the active transaction.
  struct Row {
    std::string plan_id, proposal_id, state;
  };
  std::vector<Row> rows;
  for (const auto& h : m.go.history) rows.push_back({h.plan_id, h.proposal_id, adopted_state(h.state)});
  if (found.active) {
    const std::string st_name = found.state == go::RefState::Abandoned ? "ABANDONED"
                                : want.targets == Targets::Before || found.active->state == go::RefState::RolledBack ? "ROLLED_BACK"
                                                                                                           : "DONE";
    // An abandoned transaction keeps its proposal id, not a plan id.
    rows.push_back({st_name == "ABANDONED" ? "" : found.active->plan_id, found.active->proposal_id, st_name});
  } else if (found.state == go::RefState::Abandoned) {
    rows.push_back({"", "", "ABANDONED"});  // a stage alone
  }
  auto list = st->list(store::ListFilter{std::nullopt, 0});
  ASSERT_TRUE(list.ok()) << why;
  ASSERT_EQ(list->size(), rows.size()) << why;
  // The adoption record, byte for byte the form adopt writes (canonical JSON).
  if (one_run) {
    EXPECT_EQ(slurp(m.root / ".dot" / "adopted.json"),
              fmt::format(R"({{"generation":"{}","root_id":"{}","state":"{}","transactions":{}}})",
                          go::generation_name(found.generation), found.root_id, go::ref_state_name(found.state),
                          rows.size()))
        << why;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const store::TxnSummary& t = (*list)[rows.size() - 1 - i];  // list is newest first
    EXPECT_EQ(t.plan_id, rows[i].plan_id) << why << " row " << i;
    EXPECT_EQ(t.proposal_id, rows[i].proposal_id) << why << " row " << i;
    EXPECT_EQ(store::state_name(t.state), rows[i].state) << why << " row " << i;
    EXPECT_EQ(t.effect_count.has_value(), !t.plan_id.empty() && m.spec.gen == GoGen::Effects) << why << " row " << i;
    auto events = st->events(t.id);
    ASSERT_TRUE(events.ok());
    EXPECT_TRUE(std::any_of(events->begin(), events->end(), [](const store::Event& e) { return e.code == "ADOPTED"; }))
        << why << " row " << i;
    const bool active = found.active && i + 1 == rows.size();
    const std::string active_plan = active ? found.active->plan_id : "";
    // What the reference had archived is marked so, and only that.
    const bool archived = i < m.go.history.size() || (active && found.state == go::RefState::Archiving);
    EXPECT_EQ(std::any_of(events->begin(), events->end(), [](const store::Event& e) { return e.code == "ARCHIVED"; }),
              archived)
        << why << " row " << i;
    if (active && found.active->plan) {
      // Its ADOPTED event names the state the reference left it in.
      EXPECT_TRUE(std::any_of(events->begin(), events->end(), [&](const store::Event& e) {
        return e.code == "ADOPTED" && e.detail.find("in reference state " + *imported_from) != std::string::npos;
      })) << why << " row " << i;
    }
    if (t.state == store::State::Abandoned) {
      // Never sealed (PROPOSING -> ABANDONED, a transition of dot-core's
      // own graph); a complete plan.json is kept, byte for byte, in an
      // ADOPTED event.
      EXPECT_FALSE(std::any_of(events->begin(), events->end(),
                               [](const store::Event& e) { return e.state == store::State::Sealed; }))
          << why;
      if (!active_plan.empty()) {
        const std::string& bytes = m.ref.at(active_plan).plan_json;
        EXPECT_TRUE(std::any_of(events->begin(), events->end(), [&](const store::Event& e) {
          return e.code == "ADOPTED" && e.detail.find(bytes) != std::string::npos;
        })) << why << ": the reference's plan.json is not kept";
      }
      continue;
    }
    // The original plan bytes (the reference's writer form of the stored
    // plan is its plan.json), artifacts and backups.
    auto sealed = st->load_sealed(t.id);
    ASSERT_TRUE(sealed.ok()) << why << ": " << sealed.error().line();
    auto plan = core::decode_canonical_plan(sealed->canonical_plan);
    ASSERT_TRUE(plan.ok()) << why;
    ASSERT_EQ(m.ref.count(t.plan_id), 1u) << why << " row " << i;
    const RefTxn& ref = m.ref.at(t.plan_id);
    EXPECT_EQ(go::writer_form(*plan, t.plan_id), ref.plan_json) << why << " row " << i;
    ASSERT_EQ(sealed->artifacts.size(), 2u) << why;
    ASSERT_EQ(sealed->backups.size(), 2u) << why;
    for (std::size_t slot = 0; slot < 2; ++slot) {
      EXPECT_EQ(sealed->artifacts[slot].bytes, ref.artifacts.at(slot)) << why << " row " << i;
      EXPECT_EQ(sealed->backups[slot].exists, ref.backups.count(slot) == 1) << why << " row " << i;
      if (ref.backups.count(slot)) {
        EXPECT_EQ(sealed->backups[slot].bytes, ref.backups.at(slot)) << why << " row " << i;
      }
    }
    if (t.state == store::State::Done && t.effect_count) {
      auto ledger = st->effects(t.id);
      ASSERT_TRUE(ledger.ok());
      ASSERT_EQ(ledger->size(), 1u) << why;
      EXPECT_EQ(ledger->front().state, store::EffectState::Succeeded) << why;
    }
  }
  if (found.manifest) {
    auto plugin = st->plugin("org.dot.hello");
    ASSERT_TRUE(plugin.ok() && plugin->has_value()) << why;
    EXPECT_EQ((*plugin)->sha256, m.go.plugin_digest) << why;
    EXPECT_NE((*plugin)->manifest.find(fmt::format(R"("assurance":"{}")", m.spec.assurance)), std::string::npos)
        << why << ": " << (*plugin)->manifest;
    EXPECT_EQ(sha256_hex(slurp(m.root / ".dot" / "plugin")), m.go.plugin_digest) << why;
  }
  auto report = st->check(core::judge_sealed_plan);
  ASSERT_TRUE(report.ok()) << why << ": " << report.error().line();
  std::string problems;
  for (const auto& p : report->problems) problems += p + "\n";
  EXPECT_EQ(problems, "") << why;
}

class Adopt : public ::testing::TestWithParam<Case> {};

TEST_P(Adopt, FinishesAsTheReferenceWouldThenImportsEverything) {
  const Case& c = GetParam();
  for (bool user_file : {false, true}) {
    const std::string why = fmt::format("{} {} user_file={}", gen_name(c.gen), c.state, user_file);
    Made m(c, user_file);
    auto found = go::survey(m.root.string());
    ASSERT_TRUE(found.ok()) << why << ": " << found.error().line();
    CmdResult r = dot_core({"adopt", "--root", m.root.string(), "--json"});
    ASSERT_EQ(r.code, 0) << why << ": " << r.err;
    EXPECT_NE(r.out.find(R"("outcome":"adopted")"), std::string::npos) << r.out;
    expect_adopted(m, *found, why);
    // A second adopt is a clear no-op, and dry-run says what the root is.
    const std::string settled = fingerprint(m.root);
    CmdResult again = dot_core({"adopt", "--root", m.root.string()});
    ASSERT_EQ(again.code, 0) << why << ": " << again.err;
    EXPECT_NE(again.out.find("is already adopted"), std::string::npos) << again.out;
    CmdResult dry = dot_core({"adopt", "--root", m.root.string(), "--dry-run", "--json"});
    ASSERT_EQ(dry.code, 0) << dry.err;
    EXPECT_NE(dry.out.find(R"("cleanup_pending":false)"), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find(R"("state":"ADOPTED")"), std::string::npos) << dry.out;
    EXPECT_EQ(fingerprint(m.root), settled) << why << ": a second run changed the root";
  }
}

INSTANTIATE_TEST_SUITE_P(GoRoots, Adopt, ::testing::ValuesIn(all_cases()), case_name);

// ---- the crash matrix -----------------------------------------------------------

// The cases, as the build listed them (crash_cases.h says why); the test
// after the matrix checks that list is today's.
std::vector<CrashCase> crash_cases() {
  try {
    auto cases = parse_crash_cases(slurp(DOT_ADOPT_CRASH_CASES));
    if (cases.empty()) throw std::runtime_error("no case in " DOT_ADOPT_CRASH_CASES);
    return cases;
  } catch (const std::exception& e) {
    // No list, no matrix: stop loudly rather than run without it (the
    // build's test discovery fails here).
    std::fprintf(stderr, "adopt_tests: the crash matrix's list: %s\n", e.what());
    std::abort();
  }
}
std::string crash_name(const ::testing::TestParamInfo<CrashCase>& c) {
  std::string n = gen_name(c.param.gen) + "_" + c.param.state + "_at_" + c.param.point;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

class AdoptCrash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(AdoptCrash, LeavesTheReferenceRootIntactOrTheAdoptedRootComplete) {
  const CrashCase& c = GetParam();
  Made m(crash_spec(Case{c.gen, c.state}));
  auto found = go::survey(m.root.string());
  ASSERT_TRUE(found.ok()) << found.error().line();
  CmdResult r = run_core(kHookedCore, {"adopt", "--root", m.root.string()}, {"DOT_TEST_CRASH_AT=" + c.point});
  ASSERT_EQ(r.signal, SIGKILL) << "the crash point was not reached: " << r.code << " " << r.err;
  auto adopted = go::find_adoption(m.root.string());
  ASSERT_TRUE(adopted.ok()) << adopted.error().line();
  std::string imported_from(go::ref_state_name(found->state));
  if (*adopted) {
    // The adopted root is complete; only the reference's files may remain,
    // and dry-run says so.
    CmdResult dry = dot_core({"adopt", "--root", m.root.string(), "--dry-run", "--json"});
    ASSERT_EQ(dry.code, 0) << dry.err;
    EXPECT_NE(dry.out.find(fmt::format(R"("cleanup_pending":{})", (*adopted)->cleanup_pending)), std::string::npos) << dry.out;
  } else {
    // The reference root, intact: it verifies, and no dot-core state is live.
    auto mid = go::survey(m.root.string());
    ASSERT_TRUE(mid.ok()) << mid.error().line();
    EXPECT_FALSE(fs::exists(m.root / ".dot"));
    // What the next adopt finds the interrupted transaction as: still
    // active, or archived by now (then its own terminal state).
    imported_from = go::ref_state_name(mid->state);
    if (found->active && !(mid->active && mid->active->plan_id == found->active->plan_id))
      for (const auto& h : mid->history)
        if (h.plan_id == found->active->plan_id) imported_from = go::ref_state_name(h.state);
  }
  CmdResult again = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(again.code, 0) << again.err;
  expect_adopted(m, *found, "after the crash at " + c.point, imported_from);
}

INSTANTIATE_TEST_SUITE_P(GoRoots, AdoptCrash, ::testing::ValuesIn(crash_cases()), crash_name);

// The list the matrix ran is what core's crash points over today's roots
// are: every case, in order, and no other.
TEST(AdoptCrashList, IsWhatTheSurveysOfTodaysRootsSay) {
  const std::vector<CrashCase> listed = parse_crash_cases(slurp(DOT_ADOPT_CRASH_CASES));
  const std::vector<CrashCase> now = compute_crash_cases();
  EXPECT_EQ(crash_cases_text(listed), crash_cases_text(now));
  // Every state of both generations has its cases.
  for (const Case& c : all_cases())
    EXPECT_TRUE(std::any_of(now.begin(), now.end(), [&](const CrashCase& k) { return k.gen == c.gen && k.state == c.state; }))
        << gen_name(c.gen) << " " << c.state;
}

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
  EXPECT_EQ(go::ref_state_name(s->state), "POST_COMMIT_FAILED");
  // The next adopt runs it again under the same key and imports the ledger
  // as the reference wrote it: ATTEMPTED, FAILED, ATTEMPTED, SUCCEEDED.
  CmdResult again = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(again.code, 0) << again.err;
  auto layout = store::RootLayout::for_root(m.root.string());
  auto st = store::Store::open(layout.database, core::testing::read_only());
  ASSERT_TRUE(st.ok());
  auto id = st->find(s->active->plan_id);
  ASSERT_TRUE(id.ok());
  auto ledger = st->effects(*id);
  ASSERT_TRUE(ledger.ok() && ledger->size() == 1u);
  EXPECT_EQ(ledger->front().state, store::EffectState::Succeeded);
  EXPECT_EQ(ledger->front().attempts, 2u);
}

// ---- after adoption, every command works ---------------------------------------

struct AfterAdoption : ::testing::TestWithParam<GoGen> {
  CmdResult core(std::vector<std::string> args, const fs::path& root) {
    args.push_back("--root");
    args.push_back(root.string());
    return dot_core(args);
  }
};

TEST_P(AfterAdoption, EveryCommandWorksOnTheAdoptedTransactions) {
  Scratch scratch;
  const fs::path root = scratch.dir() / "root";
  GoRootSpec spec;
  spec.gen = GetParam();
  spec.state = "committed";
  spec.user_file = true;
  spec.history = 2;
  // The reference's plugin is the real dot-hello here, so plan can run it:
  // its copy without debug sections (tests/adopt/CMakeLists.txt), which a
  // sanitizer build needs to stay under the 16 MiB a pinned plugin may have.
  spec.plugin_bytes = slurp(DOT_ADOPT_HELLO);
  ASSERT_GT(spec.plugin_bytes.size(), 0u) << DOT_ADOPT_HELLO;
  const GoRoot made = make_go_root(root, spec);
  CmdResult a = dot_core({"adopt", "--root", root.string()});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string& id = made.active.plan_id;

  CmdResult status = core({"status"}, root);
  EXPECT_EQ(status.code, 0) << status.err;
  CmdResult list = core({"inspect", "list", "--json"}, root);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find(id), std::string::npos) << list.out;
  for (const auto& h : made.history) EXPECT_NE(list.out.find(h.plan_id), std::string::npos) << list.out;
  CmdResult show = core({"inspect", "show", id}, root);
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find(made.active.proposal_id), std::string::npos) << show.out;
  if (spec.gen == GoGen::PreCapability) {
    EXPECT_NE(show.out.find("pre-capability"), std::string::npos) << show.out;
  }
  CmdResult events = core({"inspect", "events", id}, root);
  ASSERT_EQ(events.code, 0) << events.err;
  EXPECT_NE(events.out.find("adopted from the Go reference: .dot-txn in reference state COMMITTED"), std::string::npos)
      << events.out;

  // export gives the document plan-id verifies: the reference's plan id.
  CmdResult exp = core({"export", id}, root);
  ASSERT_EQ(exp.code, 0) << exp.err;
  core::testing::spit(scratch.dir() / "plan.json", exp.out);
  CmdResult pid = dot_core({"plan-id", (scratch.dir() / "plan.json").string()});
  ASSERT_EQ(pid.code, 0) << pid.err;
  EXPECT_NE(pid.out.find(id), std::string::npos) << pid.out;

  CmdResult check = core({"store", "check"}, root);
  EXPECT_EQ(check.code, 0) << check.out << check.err;

  // Rolling the adopted last transaction back restores its backups: the
  // targets as its plan saw them before.
  auto found = go::survey(root.string());
  ASSERT_FALSE(found.ok()) << "the reference's files are gone";
  CmdResult rb = core({"rollback", id}, root);
  ASSERT_EQ(rb.code, 0) << rb.err;
  auto layout = store::RootLayout::for_root(root.string());
  {
    auto st = store::Store::open(layout.database, core::testing::read_only());
    ASSERT_TRUE(st.ok());
    auto sealed = st->load_sealed(*st->find(id));
    ASSERT_TRUE(sealed.ok()) << sealed.error().line();
    auto plan = core::decode_canonical_plan(sealed->canonical_plan);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(targets_are(root, *plan, false)) << slurp(root / "hello.txt");
  }
  CmdResult check2 = core({"store", "check"}, root);
  EXPECT_EQ(check2.code, 0) << check2.out << check2.err;

  // And the adopted plugin seals new plans.
  CmdResult plan = core({"plan", "--allow-audit-plugin", "--json"}, root);
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(core::testing::json_field(plan.out, "plan_id").size(), 64u) << plan.out;
}

INSTANTIATE_TEST_SUITE_P(GoRoots, AfterAdoption, ::testing::Values(GoGen::PreCapability, GoGen::Effects),
                         [](const ::testing::TestParamInfo<GoGen>& g) {
                           return g.param == GoGen::Effects ? std::string("effects") : std::string("pre_capability");
                         });

// The reference's plugin copy keeps the assurance it was registered with.
TEST(AdoptPlugin, ProcessAssuranceIsKept) {
  Made m(Case{GoGen::Effects, "committed"}, true, 1, "process");
  auto found = go::survey(m.root.string());
  ASSERT_TRUE(found.ok()) << found.error().line();
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("assurance process"), std::string::npos) << r.out;
  expect_adopted(m, *found, "process assurance");
}

// The order of archived generations is not on disk: adopt lists them by
// their journals' mtimes, which a copy or a touch changes. So that a wrong
// guess can never pick what `rollback` undoes, no archived generation is
// rolled back (the reference never rolls one back either); the order
// changes nothing but the listing.
TEST(AdoptHistory, AnArchivedGenerationIsNeverRolledBackWhateverItsMtime) {
  Made m(Case{GoGen::Effects, "archived"}, true, 3);
  ASSERT_EQ(m.go.history.size(), 4u);
  // The oldest journal now looks newest, and the other way round; the
  // oldest's in the year 2381, whose nanoseconds overflow 64 bits.
  for (std::size_t k = 0; k < m.go.history.size(); ++k) {
    const fs::path wal = m.root / ".dot-history" / m.go.history[k].plan_id / "wal";
    const long sec = k == 0 ? 13000000000L : 1800000000L - static_cast<long>(k) * 10;
    const struct timespec t[2] = {{sec, 0}, {sec, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, wal.c_str(), t, AT_SYMLINK_NOFOLLOW), 0);
  }
  CmdResult a = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(a.code, 0) << a.err;
  CmdResult list = dot_core({"inspect", "list", "--root", m.root.string()});
  ASSERT_EQ(list.code, 0) << list.err;
  // inspect list is newest first: the generator's first generation now.
  EXPECT_LT(list.out.find(m.go.history.front().plan_id.substr(0, 16)),
            list.out.find(m.go.history.back().plan_id.substr(0, 16)))
      << list.out;
  const std::string hello = m.hello(), welcome = m.welcome();
  for (const auto& h : m.go.history) {
    if (h.state != "COMMITTED") continue;
    CmdResult rb = dot_core({"rollback", h.plan_id, "--root", m.root.string()});
    EXPECT_EQ(rb.code, 1) << h.plan_id << ": " << rb.out;
    EXPECT_EQ(rb.err.rfind("DOT_E_POLICY: ", 0), 0u) << rb.err;
    EXPECT_NE(rb.err.find("archived by the Go reference"), std::string::npos) << rb.err;
    EXPECT_EQ(m.hello(), hello);
    EXPECT_EQ(m.welcome(), welcome);
  }
  CmdResult check = dot_core({"store", "check", "--root", m.root.string()});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
}

// More than 32 archived generations is not an error (the reference only
// refuses a new archive then): all of them are imported.
TEST(AdoptHistory, MoreThan32GenerationsAreAllImported) {
  Made m(Case{GoGen::PreCapability, "archived"}, false, 32);
  ASSERT_EQ(m.go.history.size(), 33u);
  auto found = go::survey(m.root.string());
  ASSERT_TRUE(found.ok()) << found.error().line();
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_adopted(m, *found, "33 generations");
}

// A target edited after a COMMITTED transaction is the user's file: adopted
// as it is, and status shows it as drift.
TEST(AdoptDrift, AnEditAfterCommitIsLeftAndShownAsDrift) {
  Made m(Case{GoGen::Effects, "committed"}, true, 0);
  core::testing::spit(m.root / "welcome.txt", "mine now\n");
  CmdResult a = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(slurp(m.root / "welcome.txt"), "mine now\n");
  CmdResult status = dot_core({"status", "--root", m.root.string()});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("welcome.txt"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("drift"), std::string::npos) << status.out;
}

// ---- the reference used between a killed adopt and the next ---------------------

// Runs the hooked adopt until it is killed at `point`.
void kill_adopt_at(const fs::path& root, const std::string& point) {
  CmdResult r = run_core(kHookedCore, {"adopt", "--root", root.string()}, {"DOT_TEST_CRASH_AT=" + point});
  ASSERT_EQ(r.signal, SIGKILL) << point << " not reached: " << r.code << " " << r.err;
}

// Every transaction's plan id in the adopted store.
std::vector<std::string> stored_plan_ids(const fs::path& root) {
  auto st = store::Store::open(store::RootLayout::for_root(root.string()).database, core::testing::read_only());
  EXPECT_TRUE(st.ok());
  std::vector<std::string> out;
  if (!st.ok()) return out;
  auto list = st->list(store::ListFilter{std::nullopt, 0});
  EXPECT_TRUE(list.ok());
  if (list.ok())
    for (const auto& t : *list) out.push_back(t.plan_id);
  return out;
}

// adopt killed once `.dot/` is durable leaves a root the reference still
// reads as valid. The reference is used on it in between: `archive` (the
// adopted transaction moves to .dot-history) and a new apply of a file the
// user had edited (its .dot-txn holds the backup of that edit). Those are
// not what adopt imported: the next adopt (and its --dry-run) refuses,
// naming each entry, and deletes nothing.
TEST(AdoptResume, WhatTheReferenceWroteAfterTheImportIsNeverDeleted) {
  for (const char* state : {"committed", "committing"}) {
    SCOPED_TRACE(state);
    Made m(Case{GoGen::Effects, "committed"}, true, 1);
    kill_adopt_at(m.root, "adopt.import.durable");
    auto adopted = go::find_adoption(m.root.string());
    ASSERT_TRUE(adopted.ok() && *adopted && (*adopted)->cleanup_pending);

    core::testing::spit(m.root / "hello.txt", "mine, edited after the apply\n");
    const GoRoot next = continue_go_root(m.root, m.spec, m.go, state);
    ASSERT_EQ(next.history.back().plan_id, m.go.active.plan_id);
    ASSERT_EQ(slurp(m.root / ".dot-txn/backup-0"), "mine, edited after the apply\n");
    const std::string before = fingerprint(m.root);

    CmdResult dry = dot_core({"adopt", "--root", m.root.string(), "--dry-run"});
    CmdResult r = dot_core({"adopt", "--root", m.root.string()});
    for (const CmdResult* c : {&dry, &r}) {
      EXPECT_EQ(c->code, 1) << c->out;
      EXPECT_EQ(c->err.rfind("DOT_E_RECOVERY_REQUIRED: ", 0), 0u) << c->err;
      for (const char* entry : {".dot-txn/plan.json", ".dot-txn/wal", ".dot-txn/backup-0", ".dot-txn/artifact-0",
                                ".dot-stage/hello.txt"})
        EXPECT_NE(c->err.find(entry), std::string::npos) << entry << ": " << c->err;
      // The archived generation is the transaction adopt imported, moved: not
      // named (it is byte for byte what was imported).
      EXPECT_EQ(c->err.find(".dot-history/"), std::string::npos) << c->err;
    }
    EXPECT_EQ(dry.err, r.err);
    EXPECT_EQ(fingerprint(m.root), before) << "adopt changed the root it refused";
    // The reference still reads it: its new transaction is intact.
    auto s = go::survey(m.root.string());
    ASSERT_TRUE(s.ok()) << s.error().line();
    EXPECT_EQ(s->active->plan_id, next.active.plan_id);
    EXPECT_EQ(s->history.size(), 2u);
  }
}

// The reference only archived what adopt had imported: the same bytes,
// moved. The next adopt finishes the cleanup; the store keeps the
// transaction it imported.
TEST(AdoptResume, AnArchiveOfWhatWasImportedIsCleanedUp) {
  Made m(Case{GoGen::Effects, "committed"}, true, 1);
  kill_adopt_at(m.root, "adopt.import.durable");
  // The reference's archive, without the apply that would follow it.
  {
    const fs::path txn = m.root / ".dot-txn";
    core::testing::spit(m.root / ".dot-archive",
                        fmt::format(R"({{"plan_id":"{}","stage":true}})", m.go.active.plan_id));
    fs::rename(m.root / ".dot-stage", txn / "stage");
    fs::rename(txn, m.root / ".dot-history" / m.go.active.plan_id);
    fs::remove(m.root / ".dot-archive");
  }
  ASSERT_TRUE(go::survey(m.root.string()).ok());
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("interrupted cleanup is finished"), std::string::npos) << r.out;
  for (const auto& e : kReferenceEntries) EXPECT_FALSE(fs::exists(fs::symlink_status(m.root / e))) << e;
  const auto ids = stored_plan_ids(m.root);
  EXPECT_NE(std::find(ids.begin(), ids.end(), m.go.active.plan_id), ids.end());
}

// A cleanup killed half-way through a folder (no crash point there: a
// power cut) leaves part of what was imported; the rest is still known by
// its transaction id and hash, and goes.
TEST(AdoptResume, AHalfRemovedTransactionIsStillKnown) {
  Made m(Case{GoGen::Effects, "committed"}, true, 1);
  kill_adopt_at(m.root, "adopt.import.durable");
  fs::remove_all(m.root / ".dot-stage");
  fs::remove(m.root / ".dot-txn/plan.json");
  fs::remove(m.root / ".dot-txn/artifact-1");
  CmdResult dry = dot_core({"adopt", "--root", m.root.string(), "--dry-run"});
  EXPECT_EQ(dry.code, 0) << dry.err;
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& e : kReferenceEntries) EXPECT_FALSE(fs::exists(fs::symlink_status(m.root / e))) << e;
}

// The same, but a file of the half-removed transaction is not what was
// imported: refused, named, kept.
TEST(AdoptResume, AChangedFileOfAnImportedTransactionIsKept) {
  Made m(Case{GoGen::Effects, "committed"}, true, 1);
  kill_adopt_at(m.root, "adopt.import.durable");
  fs::remove(m.root / ".dot-txn/plan.json");
  core::testing::spit(m.root / ".dot-txn/backup-0", "not what was imported\n");
  const std::string before = fingerprint(m.root);
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.err.rfind("DOT_E_RECOVERY_REQUIRED: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(".dot-txn/backup-0"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".dot-txn/wal"), std::string::npos) << r.err;
  EXPECT_EQ(fingerprint(m.root), before);
}

// An import that was never made durable is dropped: the reference's use of
// the root in between is simply part of what the next adopt imports.
TEST(AdoptResume, BeforeTheImportIsDurableTheReferencesNewWorkIsImported) {
  Made m(Case{GoGen::Effects, "committed"}, true, 1);
  kill_adopt_at(m.root, "adopt.import.built");
  const GoRoot next = continue_go_root(m.root, m.spec, m.go, "committed");
  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ids = stored_plan_ids(m.root);
  EXPECT_NE(std::find(ids.begin(), ids.end(), next.active.plan_id), ids.end());
  for (const auto& h : next.history) EXPECT_NE(std::find(ids.begin(), ids.end(), h.plan_id), ids.end());
}

// ---- a plugin copy that no longer matches its registration ------------------------

// Finishing never runs the plugin: a COMMITTING root (both targets already
// replaced) whose `.dot-plugin` was replaced is still rolled back as the reference's recover would, its
// history imported, and no plugin registered; adopt says so, and plan asks
// for a fresh register.
TEST(AdoptPlugin, AChangedPluginCopyIsNotRegisteredAndRecoveryStillFinishes) {
  Made m(Case{GoGen::Effects, "renamed-1"}, true, 2);
  ::chmod((m.root / ".dot-plugin").c_str(), 0700);
  core::testing::spit(m.root / ".dot-plugin", "#!/bin/sh\n# not the plugin that was registered\n", 0500);
  auto found = go::survey(m.root.string());
  ASSERT_TRUE(found.ok()) << found.error().line();
  EXPECT_NE(found->plugin_untrusted.find("not to the digest"), std::string::npos) << found->plugin_untrusted;
  CmdResult dry = dot_core({"adopt", "--root", m.root.string(), "--dry-run"});
  ASSERT_EQ(dry.code, 0) << dry.err;
  EXPECT_NE(dry.out.find("not trusted"), std::string::npos) << dry.out;

  CmdResult r = dot_core({"adopt", "--root", m.root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("none registered"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("register"), std::string::npos) << r.out;
  // Finished as the reference would (all-before), history imported.
  EXPECT_TRUE(targets_are(m.root, *found->active->plan, false)) << m.hello() << m.welcome();
  const auto ids = stored_plan_ids(m.root);
  EXPECT_EQ(ids.size(), 3u);
  {
    auto st = store::Store::open(store::RootLayout::for_root(m.root.string()).database, core::testing::read_only());
    ASSERT_TRUE(st.ok());
    auto plugins = st->plugins();
    ASSERT_TRUE(plugins.ok());
    EXPECT_TRUE(plugins->empty());
    auto id = st->find(m.go.active.plan_id);
    ASSERT_TRUE(id.ok());
    auto list = st->list(store::ListFilter{std::nullopt, 0});
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(store::state_name(list->front().state), "ROLLED_BACK");
  }
  EXPECT_FALSE(fs::exists(m.root / ".dot" / "plugin"));
  CmdResult check = dot_core({"store", "check", "--root", m.root.string()});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  CmdResult plan = dot_core({"plan", "--root", m.root.string(), "--allow-audit-plugin"});
  EXPECT_NE(plan.code, 0);
  EXPECT_NE(plan.err.find("no plugin is registered"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("register"), std::string::npos) << plan.err;
}

// ---- bad input through the command: typed, nothing changed ----------------------

struct BadCase {
  const char* name;
  const char* state;
  std::function<void(const fs::path&)> spoil;
  const char* code;
};

void refused_unchanged(const fs::path& root, const char* code, const std::string& why) {
  const std::string before = fingerprint(root);
  CmdResult r = dot_core({"adopt", "--root", root.string()});
  EXPECT_EQ(r.code, 1) << why << ": " << r.out;
  EXPECT_EQ(r.err.rfind(std::string(code) + ": ", 0), 0u) << why << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << why << ": " << r.err;
  EXPECT_EQ(fingerprint(root), before) << why << ": changed";
}

TEST(AdoptBadInput, EachIsTypedAndChangesNothing) {
  const std::vector<BadCase> cases = {
      {"root not 0700", "committed", [](const fs::path& r) { ::chmod(r.c_str(), 0750); }, "DOT_E_POLICY"},
      {"plan ids do not match", "committing",
       [](const fs::path& r) {
         std::string p = slurp(r / ".dot-txn/plan.json");
         p.replace(p.find("\"nonce\":\"") + 9, 1, p[p.find("\"nonce\":\"") + 9] == 'a' ? "b" : "a");
         core::testing::spit(r / ".dot-txn/plan.json", p);
       },
       "DOT_E_VALIDATION"},
      {"unknown WAL record", "committed",
       [](const fs::path& r) { core::testing::spit(r / ".dot-txn/wal", "{\"state\":\"PREPARED\"}\n{\"state\":\"DONE\"}\n"); },
       "DOT_E_VALIDATION"},
      {"illegal WAL succession", "committed",
       [](const fs::path& r) {
         core::testing::spit(r / ".dot-txn/wal", "{\"state\":\"PREPARED\"}\n{\"state\":\"COMMITTED\"}\n");
       },
       "DOT_E_VALIDATION"},
      {"artifact differs", "prepared",
       [](const fs::path& r) { core::testing::spit(r / ".dot-txn/artifact-1", "not sealed\n"); }, "DOT_E_ARTIFACT_MISMATCH"},
      {"backup differs", "renamed-1",
       [](const fs::path& r) { core::testing::spit(r / ".dot-txn/backup-0", "not old\n"); }, "DOT_E_ARTIFACT_MISMATCH"},
      {"plugin copy without a manifest", "registered",
       [](const fs::path& r) { fs::remove(r / ".dot-plugin.json"); }, "DOT_E_PLUGIN_IDENTITY"},
      {"archive intent naming a missing generation", "archived",
       [](const fs::path& r) {
         core::testing::spit(r / ".dot-archive", std::string(R"({"plan_id":")") + std::string(64, 'a') + R"(","stage":false})");
       },
       "DOT_E_VALIDATION"},
      {"symlink among the reference's files", "committed",
       [](const fs::path& r) {
         fs::rename(r / ".dot-txn/artifact-0", r / "elsewhere");
         fs::create_symlink(r / "elsewhere", r / ".dot-txn/artifact-0");
       },
       "DOT_E_PATH_ESCAPE"},
      {"target edited where recover would refuse", "flushed-1",
       [](const fs::path& r) { core::testing::spit(r / "hello.txt", "edited\n"); }, "DOT_E_RECOVERY_REQUIRED"},
      {"dot-core state not made by adopt", "committed",
       [](const fs::path& r) { fs::create_directory(r / ".dot"); }, "DOT_E_VALIDATION"},
  };
  for (const auto& c : cases) {
    Made m(Case{GoGen::Effects, c.state}, true, 1);
    c.spoil(m.root);
    refused_unchanged(m.root, c.code, c.name);
  }
}

// Ownership (docs/user-guide.md, "Coming from the Go reference"): a plan the
// reference sealed for another group is refused, since dot-core keeps only
// plans whose `after` is owned by the user and group running it; a target
// whose `before` has another group cannot be restored exactly by us.
TEST(AdoptBadInput, AnotherGroupIsRefusedAndChangesNothing) {
  ASSERT_EQ(::geteuid(), 0u) << "giving files another group needs root";
  for (const char* state : {"committed", "prepared"}) {
    Scratch scratch;
    GoRootSpec spec;
    spec.state = state;
    spec.user_file = true;
    spec.stage_gid = 4242;
    make_go_root(scratch.dir() / "root", spec);
    refused_unchanged(scratch.dir() / "root", "DOT_E_POLICY", std::string("stage group, ") + state);
  }
  Scratch scratch;
  GoRootSpec spec;
  spec.state = "renamed-0";
  spec.user_file = true;
  spec.user_file_gid = 4242;
  make_go_root(scratch.dir() / "root", spec);
  CmdResult dry = dot_core({"adopt", "--root", (scratch.dir() / "root").string(), "--dry-run"});
  EXPECT_NE(dry.err.find("gid 4242"), std::string::npos) << dry.err;
  refused_unchanged(scratch.dir() / "root", "DOT_E_POLICY", "user file group");
}

}  // namespace
}  // namespace dot::adopt_test
